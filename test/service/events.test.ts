// The SSE stream: a snapshot on connect, live events as they happen, and a server that still
// closes promptly with a client attached.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { within } from '../support/wait.js';

after(closeTestDatabase);

/** Reads SSE frames from a fetch body and yields { event, data }. */
async function* frames(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: unknown }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (event && data) yield { event, data: JSON.parse(data) };
    }
  }
}

describe('event stream', () => {
  it('sends a snapshot on connect, then a lease acquisition as it happens', () =>
    withSchema('sse stream', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({ lh, port: 0 });
      const controller = new AbortController();
      try {
        const response = await fetch(`${server.url}/api/events`, { signal: controller.signal });
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
        const stream = frames(response.body!);
        const first = await within(stream.next(), 5_000, 'the first frame');
        assert.equal(first.value?.event, 'snapshot');
        assert.deepEqual((first.value?.data as { leases: unknown[] }).leases, []);

        await fetch(`${server.url}/api/leases`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ resource: 'live', holder: 'a' }),
        });
        let seen: { event: string; data: unknown } | undefined;
        await within(
          (async () => {
            for await (const frame of stream) {
              if (frame.event === 'lease:acquired') {
                seen = frame;
                break;
              }
            }
          })(),
          5_000,
          'the lease:acquired event',
        );
        assert.equal((seen?.data as { resource: string }).resource, 'live');
      } finally {
        // A hang detector, not a timing bound: a stream left open used to keep close() waiting forever.
        await within(server.close(), 15_000, 'the server closing with a stream open');
        controller.abort();
      }
    }));
});
