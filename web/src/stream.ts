/**
 * The live connection: a fetch-based Server-Sent Events reader (EventSource cannot send an
 * Authorization header), reconnecting with backoff. The server sends a full snapshot on every
 * connect, so a reconnect is also the catch-up.
 */
import { authHeaders, serviceUrl } from './api.js';

export interface StreamHandlers {
  onEvent(event: string, data: unknown): void;
  onStatus(status: 'connecting' | 'live' | 'retrying' | 'unauthorized'): void;
}

export function connectStream(handlers: StreamHandlers): () => void {
  let stopped = false;
  let controller: AbortController | undefined;
  let failures = 0;

  const run = async (): Promise<void> => {
    while (!stopped) {
      controller = new AbortController();
      handlers.onStatus(failures === 0 ? 'connecting' : 'retrying');
      try {
        const response = await fetch(serviceUrl('/api/events'), {
          headers: { accept: 'text/event-stream', ...authHeaders() },
          signal: controller.signal,
        });
        if (response.status === 401 || response.status === 403) {
          handlers.onStatus('unauthorized');
          return;
        }
        if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
        handlers.onStatus('live');
        failures = 0;
        await readFrames(response.body, handlers.onEvent);
      } catch {
        // dropped or refused: retry below
      }
      if (stopped) return;
      failures++;
      handlers.onStatus('retrying');
      await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** Math.min(failures, 5))));
    }
  };
  void run();
  return () => {
    stopped = true;
    controller?.abort();
  };
}

async function readFrames(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: string, data: unknown) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of frame.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data) onEvent(event, JSON.parse(data));
    }
  }
}
