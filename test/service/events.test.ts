// The SSE stream: a snapshot on connect, live events as they happen, and a server that still
// closes promptly with a client attached.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { LIVENESS_MS, within } from '../support/wait.js';

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
        const first = await within(stream.next(), LIVENESS_MS, 'the first frame');
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

  it("streams a running job's progress as job:progress, and GET /api/jobs/:id answers it", () =>
    withSchema('sse progress', async (schema) => {
      const engine = await schema.engine();
      const lh = Leasehold.fromEngine(engine);
      const server = await startServer({ lh, port: 0 });
      const controller = new AbortController();
      try {
        const queued = await lh.queue('reports').enqueue({});
        const [job] = await engine.jobClaimBatch({
          queues: ['reports'],
          workerId: 'w1',
          limit: 1,
          leaseTtlMs: 60_000,
        });
        const report = async (progress: number | Record<string, unknown>): Promise<void> => {
          const accepted = await engine.jobProgress({
            workerId: 'w1',
            jobs: [{ id: job!.id, generation: job!.generation, progress }],
          });
          assert.deepEqual(accepted, [queued.id]);
        };
        await report(25);
        const response = await fetch(`${server.url}/api/events`, { signal: controller.signal });
        const stream = frames(response.body!);
        const nextProgress = (): Promise<Record<string, unknown>> =>
          within(
            (async () => {
              // next() by hand: returning from a for-await loop would close the generator.
              for (;;) {
                const frame = await stream.next();
                if (frame.done) throw new Error('the stream ended');
                if (frame.value.event === 'job:progress')
                  return frame.value.data as Record<string, unknown>;
              }
            })(),
            10_000,
            'a job:progress event',
          );
        const first = await nextProgress();
        assert.deepEqual(
          [first.id, first.queue, first.progress, first.generation, first.attempts],
          [queued.id, 'reports', 25, job!.generation, 1],
        );
        await report({ step: 'render', page: 3 });
        const second = await nextProgress();
        assert.deepEqual(second.progress, { step: 'render', page: 3 });

        const got = await fetch(`${server.url}/api/jobs/${queued.id}`);
        assert.equal(got.status, 200);
        assert.deepEqual(((await got.json()) as { progress: unknown }).progress, {
          step: 'render',
          page: 3,
        });
        await report(75);
        const percent = (await (await fetch(`${server.url}/api/jobs/${queued.id}`)).json()) as {
          progress: unknown;
        };
        assert.equal(percent.progress, 75);
      } finally {
        controller.abort();
        await within(server.close(), 15_000, 'the server closing');
      }
    }));
});
