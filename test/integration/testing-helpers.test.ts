/**
 * `waitForJob` and `drainQueue` from `leasehold/testing`, on PostgreSQL and on the memory engine:
 * they resolve with what the database holds once the work is done, and fail with a typed error
 * that says where things stood when it is not (timeout, a job finished otherwise, a bad input).
 * Each timeout below is the expected outcome (nothing can run the job), never a race.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import {
  AbortedError,
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  TimeoutError,
} from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import type { Worker } from '../../src/queue/worker.js';
import { drainQueue, waitForJob } from '../../src/testing/index.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { deferred } from '../support/wait.js';

after(closeTestDatabase);

type Run = (title: string, fn: (lh: Leasehold) => Promise<void>) => Promise<void>;

const ENGINES: { name: string; run: Run }[] = [
  {
    name: 'postgres',
    run: (title, fn) =>
      withSchema(title, async (schema) => {
        const lh = Leasehold.fromEngine(await schema.engine());
        try {
          await fn(lh);
        } finally {
          await lh.close();
        }
      }),
  },
  {
    name: 'memory',
    run: async (_title, fn) => {
      const lh = Leasehold.memory();
      try {
        await fn(lh);
      } finally {
        await lh.close();
      }
    },
  },
];

/** A started worker on `queue` running `handler`, polling often so nothing waits on a poll. */
async function startWorker(
  lh: Leasehold,
  queue: string,
  handler: (payload: unknown) => Promise<unknown>,
): Promise<Worker> {
  const worker = lh.worker({
    queues: queue,
    handler: (job) => handler(job.payload),
    pollInterval: 50,
    retryBackoff: { baseMs: 1, capMs: 1 },
  });
  await worker.start();
  return worker;
}

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

const patient = { timeout: EVENT_TIMEOUT_MS };

for (const { name, run } of ENGINES) {
  describe(`waitForJob on ${name}`, () => {
    it('resolves with the job as stored once a worker has completed it', () =>
      run('wait for job completed', async (lh) => {
        await startWorker(lh, 'mail', async (payload) => ({ sent: payload }));
        const job = await lh.queue('mail').enqueue('a@example.com');
        const done = await waitForJob(lh, job.id, patient);
        assert.equal(done.status, 'completed');
        assert.deepEqual(done.result, { sent: 'a@example.com' });
        assert.deepEqual(done, await lh.engine.jobGet({ id: job.id }));
      }));

    it('waits for the status asked for: processing while the handler runs', () =>
      run('wait for job processing', async (lh) => {
        const release = deferred();
        await startWorker(lh, 'slow', async () => release.promise);
        const job = await lh.queue('slow').enqueue(null);
        const running = await waitForJob(lh, job.id, { ...patient, status: 'processing' });
        assert.equal(running.status, 'processing');
        assert.equal(running.generation, 1);
        release.resolve();
        const done = await waitForJob(lh, job.id, { ...patient, status: ['completed', 'dead'] });
        assert.equal(done.status, 'completed');
      }));

    it('rejects with a TimeoutError saying where the job stood when nothing runs it', () =>
      run('wait for job timeout', async (lh) => {
        const job = await lh.queue('nobody').enqueue(null);
        const error = await rejection(waitForJob(lh, job.id, { timeout: 200, interval: 20 }));
        assert.ok(error instanceof TimeoutError, String(error));
        assert.equal(error.code, 'timeout');
        assert.deepEqual(error.details, {
          jobId: job.id,
          status: 'pending',
          awaited: ['completed', 'dead', 'cancelled'],
          timeoutMs: 200,
        });
        assert.match(error.message, /still pending/);
        assert.equal((await lh.engine.jobGet({ id: job.id }))?.status, 'pending');
      }));

    it('rejects with a ConflictError when the job finishes in a status not awaited', () =>
      run('wait for job dead', async (lh) => {
        await startWorker(lh, 'fragile', async () => {
          throw new Error('boom');
        });
        const job = await lh.queue('fragile').enqueue(null, { maxAttempts: 1 });
        const error = await rejection(waitForJob(lh, job.id, { ...patient, status: 'completed' }));
        assert.ok(error instanceof ConflictError, String(error));
        assert.deepEqual(error.details, { jobId: job.id, status: 'dead', awaited: ['completed'] });
        assert.match(
          (await waitForJob(lh, job.id, { status: 'dead' })).lastError ?? '',
          /^Error: boom/,
        );
      }));

    it('rejects an unknown job with NotFoundError and bad input with InvalidArgumentError', () =>
      run('wait for job bad input', async (lh) => {
        const job = await lh.queue('q').enqueue(null);
        const unknown = await rejection(waitForJob(lh, job.id + 1000));
        assert.ok(unknown instanceof NotFoundError, String(unknown));
        for (const [id, options, field] of [
          [0, {}, 'jobId'],
          [1.5, {}, 'jobId'],
          [job.id, { status: 'done' }, 'status'],
          [job.id, { status: ['completed', 'finished'] }, 'status[1]'],
          [job.id, { timeout: 'soon' }, 'timeout'],
          [job.id, { interval: -1 }, 'interval'],
        ] as const) {
          const error = await rejection(waitForJob(lh, id, options as never));
          assert.ok(error instanceof InvalidArgumentError, String(error));
          assert.equal(error.field, field);
        }
        assert.equal((await lh.engine.jobGet({ id: job.id }))?.status, 'pending');
      }));

    it('stops waiting when its signal aborts', () =>
      run('wait for job aborted', async (lh) => {
        const job = await lh.queue('nobody').enqueue(null);
        const controller = new AbortController();
        const waiting = waitForJob(lh, job.id, { ...patient, signal: controller.signal });
        controller.abort();
        assert.ok((await rejection(waiting)) instanceof AbortedError);
      }));
  });

  describe(`drainQueue on ${name}`, () => {
    it('resolves with the counts once nothing of the queue is pending or processing', () =>
      run('drain queue', async (lh) => {
        await startWorker(lh, 'batch', async (payload) => {
          if ((payload as { n: number }).n % 5 === 0) throw new Error('multiple of five');
          return null;
        });
        await lh.queue('other').enqueue(null); // another queue's pending job is not waited for
        const queue = lh.queue('batch');
        await queue.enqueueMany(
          Array.from({ length: 20 }, (_, n) => ({ payload: { n }, options: { maxAttempts: 2 } })),
        );
        const counts = await drainQueue(lh, queue, patient);
        assert.deepEqual(counts, {
          waiting: 0,
          pending: 0,
          processing: 0,
          completed: 16,
          dead: 4,
          cancelled: 0,
        });
        const other = await lh.engine.jobList({ queue: 'other', limit: 10, offset: 0 });
        assert.deepEqual(
          other.map((j) => j.status),
          ['pending'],
        );
      }));

    it('rejects with a TimeoutError counting what is left when nothing runs the queue', () =>
      run('drain queue timeout', async (lh) => {
        await lh.queue('stuck').enqueueMany([{ payload: 1 }, { payload: 2 }]);
        const error = await rejection(drainQueue(lh, 'stuck', { timeout: '200ms' }));
        assert.ok(error instanceof TimeoutError, String(error));
        assert.deepEqual(error.details, {
          queue: 'stuck',
          pending: 2,
          processing: 0,
          waiting: 0,
          timeoutMs: 200,
        });
        const bad = await rejection(drainQueue(lh, ''));
        assert.ok(bad instanceof InvalidArgumentError && bad.field === 'queue', String(bad));
      }));

    it('resolves at once for a queue that never had a job', () =>
      run('drain empty queue', async (lh) => {
        assert.deepEqual(await drainQueue(lh, 'empty'), {
          waiting: 0,
          pending: 0,
          processing: 0,
          completed: 0,
          dead: 0,
          cancelled: 0,
        });
      }));
  });
}

describe('the helpers on a ManualClock', () => {
  it('wait in real time, so a clock nobody advances does not hold them up', async () => {
    const clock = new ManualClock();
    const lh = Leasehold.memory({ clock });
    try {
      const job = await lh.queue('q').enqueue(null);
      // Cancelled from outside while the helpers wait; the manual clock never moves.
      setTimeout(() => void lh.engine.jobCancel({ id: job.id }), 50);
      const [cancelled, counts] = await Promise.all([
        waitForJob(lh, job.id, patient),
        drainQueue(lh, 'q', patient),
      ]);
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(counts.cancelled, 1);
    } finally {
      await lh.close();
    }
  });
});
