/**
 * A fake external service that is idempotent by key, as the step's key asks of one: it counts
 * every call per key and acts (counts an effect) only on the first call with a key.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class IdempotentService {
  readonly seen = new Map<string, number>();
  readonly acted = new Map<string, number>();
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const key = new URL(req.url ?? '/', 'http://x').searchParams.get('key') ?? '';
      this.seen.set(key, (this.seen.get(key) ?? 0) + 1);
      if (!this.acted.has(key)) this.acted.set(key, 1);
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
