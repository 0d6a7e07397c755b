/**
 * GET /api/events: a Server-Sent Events stream. On connect it sends a full `snapshot` (so a
 * reconnecting client has caught up the moment it is back), then a `snapshot` every second,
 * and in between the events this instance observes (`lease:acquired`, `task:completed`, …) the
 * moment they happen, and `job:progress` when a running job's progress changed (read once a
 * second, progress-watcher.ts). A comment line every 15 s keeps proxies from closing an idle
 * stream.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { ProgressWatcher } from '../progress-watcher.js';
import { readSnapshot, Snapshotter } from '../snapshot.js';

const KEEPALIVE_MS = 15_000;

export function eventRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const snapshotter = new Snapshotter(ctx.lh);
  const progressWatcher = new ProgressWatcher(ctx.lh);
  const open = new Set<() => void>();
  // `preClose`: end the streams first, or closing the server would wait for them forever.
  app.addHook('preClose', async () => {
    for (const close of [...open]) close();
    await Promise.all([snapshotter.stop(), progressWatcher.stop()]);
  });

  app.get('/api/events', {
    config: { scope: 'read' },
    schema: {
      operationId: 'streamEvents',
      tags: ['operations'],
      produces: ['text/event-stream'],
      summary:
        'Live updates as Server-Sent Events: snapshot on connect and every second, plus events.',
    },
    handler: async (request, reply) => {
      const first = await readSnapshot(ctx.lh);
      if (reply.sent) return; // answered 503 by the reply deadline meanwhile (reply-deadline.ts)
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let id = 0;
      const send = (event: string, data: unknown): void => {
        if (raw.writableEnded) return;
        raw.write(`id: ${++id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      // Tell EventSource to reconnect after 1 s when the stream drops.
      raw.write('retry: 1000\n\n');
      send('snapshot', first);
      const offSnapshot = snapshotter.subscribe((s) => send('snapshot', s));
      const offProgress = progressWatcher.subscribe((p) => send('job:progress', p));
      const offEvents = ctx.events.onAny((name, payload) => send(String(name), payload));
      const keepalive = setInterval(() => raw.write(': keepalive\n\n'), KEEPALIVE_MS);
      const close = (): void => {
        open.delete(close);
        clearInterval(keepalive);
        offSnapshot();
        offProgress();
        offEvents();
        if (!raw.writableEnded) raw.end();
      };
      open.add(close);
      request.raw.once('close', close);
    },
  });
}
