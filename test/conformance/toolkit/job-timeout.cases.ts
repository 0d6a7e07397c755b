import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { JobTimeoutError, isLeaseholdError } from '../../../src/core/errors.js';
import type { Job } from '../../../src/core/types.js';
import type { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import type { Leasehold } from '../../../src/leasehold.js';
import type { Worker, WorkerEvents } from '../../../src/queue/worker.js';
import type { WorkerOptions } from '../../../src/queue/worker-options.js';
import { pumpFor, pumpUntil } from '../../support/manual-time.js';
import { deferred } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/** A handler's promise that never settles: the handler ignores its signal for good. */
const NEVER = new Promise<never>(() => {});

/**
 * A job's `timeout` on every engine (decision 0241): at the timeout the signal fires with a
 * JobTimeoutError and the attempt is failed through the retry policy, whether or not the handler
 * stops; its slot is freed then; what the handler does afterwards is refused or ignored. Time is
 * a ManualClock, so the timeout falls when the pump moves the clock past it, never by sleeping;
 * the assertions are about order and stored state, not about real time.
 */
export function jobTimeoutCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: job timeout`, () => {
    conformanceCase(
      h,
      'fails a handler that ignores its signal at the timeout, retries it, and completes the retry',
      async ({ lh, clock, engine }) => {
        const queued = await lh.queue('slow').enqueue({}, { timeout: '1s', maxAttempts: 3 });
        const signals: AbortSignal[] = [];
        const worker = newWorker(lh, {
          queues: 'slow',
          retryBackoff: { baseMs: 100, capMs: 100 },
          handler: async (_job, ctx) => {
            signals.push(ctx.signal);
            if (ctx.attempt === 1) return NEVER; // ignores its signal, never settles
            return 'second time lucky';
          },
        });
        const events = record(worker);
        await worker.start();
        try {
          const done = await pumpUntil(
            clock,
            'the retry completed',
            async () => {
              // The stored outcome can be seen a moment before the worker's event is emitted.
              const job = await engine.jobGet({ id: queued.id });
              return job?.status === 'completed' && events.log.includes('completed') ? job : null;
            },
            { stepMs: 20 },
          );
          assert.equal(done.attempts, 2);
          assert.equal(done.result, 'second time lucky');
          assert.equal(done.errors.length, 1);
          assert.equal(done.errors[0]?.attempt, 1);
          assert.match(
            done.errors[0]!.error,
            new RegExp(`^JobTimeoutError: job ${queued.id} timed out after 1000 ms`),
          );
          // Failed at the timeout, not when the 30 s lease would have run out.
          const failedAfter = done.errors[0]!.at.getTime() - queued.createdAt.getTime();
          assert.ok(failedAfter >= 1_000 && failedAfter < 30_000, `failed after ${failedAfter} ms`);

          const reason: unknown = signals[0]?.reason;
          assert.ok(signals[0]?.aborted, "the first attempt's signal fired");
          assert.ok(reason instanceof JobTimeoutError);
          assert.ok(isLeaseholdError(reason, 'timeout'));
          assert.deepEqual(reason.details, { jobId: queued.id, timeoutMs: 1_000 });
          assert.equal(signals[1]?.aborted, false, "the retry's signal did not fire");

          assert.deepEqual(events.log, ['started', 'failed', 'started', 'completed']);
          const [failed] = events.failed;
          assert.equal(failed?.timedOut, true);
          assert.equal(failed?.outcome, 'retried');
          assert.match(failed?.error ?? '', /timed out after 1000 ms/);
          assert.equal(worker.abandoned, 1, 'the first handler is still out there');
          assert.equal(worker.inFlight, 0);
        } finally {
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      "uses the job's own timeout over the worker's default, and the default for jobs without one",
      async ({ lh, clock, engine }) => {
        const own = await lh.queue('t').enqueue('own', { timeout: 500, maxAttempts: 1 });
        const dflt = await lh.queue('t').enqueue('default', { maxAttempts: 1 });
        const worker = newWorker(lh, {
          queues: 't',
          concurrency: 2,
          timeout: '2s',
          handler: async () => NEVER,
        });
        const events = record(worker);
        await worker.start();
        try {
          await pumpUntil(
            clock,
            'both dead-lettered',
            async () =>
              (await engine.jobGet({ id: own.id }))?.status === 'dead' &&
              (await engine.jobGet({ id: dflt.id }))?.status === 'dead',
            { stepMs: 20 },
          );
        } finally {
          await worker.stop();
        }
        assert.deepEqual(
          events.failed.map((f) => [f.job.id, f.outcome, f.timedOut]),
          [
            [own.id, 'dead', true],
            [dflt.id, 'dead', true],
          ],
          "the job's 500 ms ran out first",
        );
        assert.match(events.failed[0]!.error, /timed out after 500 ms/);
        assert.match(events.failed[1]!.error, /timed out after 2000 ms/);
        assert.equal((await engine.jobGet({ id: own.id }))?.timeoutMs, 500);
        assert.equal((await engine.jobGet({ id: dflt.id }))?.timeoutMs, null);
      },
    );

    conformanceCase(
      h,
      'refuses what a timed-out handler does afterwards: no completion, no job:completed',
      async ({ lh, clock, engine }) => {
        const queued = await lh.queue('late').enqueue({}, { timeout: 500, maxAttempts: 2 });
        const gate = deferred();
        let renewAfter: unknown;
        const worker = newWorker(lh, {
          queues: 'late',
          // The retry waits an hour: the job stays as the timeout left it.
          retryBackoff: { baseMs: 3_600_000, capMs: 3_600_000 },
          handler: async (_job, ctx) => {
            await gate.promise; // ignores its signal, then finishes late
            renewAfter = await ctx.renew().then(
              () => 'renewed',
              (error: unknown) => error,
            );
            return 'too late';
          },
        });
        const events = record(worker);
        await worker.start();
        try {
          await pumpUntil(clock, 'the timeout failure', () => events.failed.length === 1, {
            stepMs: 20,
          });
          assert.equal(worker.abandoned, 1);
          gate.resolve();
          await pumpUntil(clock, 'the late handler to settle', () => worker.abandoned === 0);
          await pumpFor(clock, 200);
          assert.ok(renewAfter instanceof JobTimeoutError, 'renew() refused after the timeout');
          assert.deepEqual(events.log, ['started', 'failed'], 'no job:completed for it');
          const job = (await engine.jobGet({ id: queued.id }))!;
          assert.equal(job.status, 'pending', 'retried after its backoff, not completed');
          assert.equal(job.result, null);
          assert.equal(job.attempts, 1);
          assert.equal(job.leaseExpiresAt, null, 'the lease was given up by the failure');
          assert.match(job.lastError ?? '', /timed out after 500 ms/);
        } finally {
          gate.resolve();
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      "refuses a timed-out handler's completion in its own transaction, which must roll back",
      async ({ lh, clock, engine }) => {
        const pool = (engine as PostgresEngine).pool;
        const schema = (engine as PostgresEngine).schema;
        await pool.query(`CREATE TABLE "${schema}".invoices (job_id bigint PRIMARY KEY)`);
        const queued = await lh.queue('billing').enqueue({}, { timeout: 500, maxAttempts: 2 });
        const gate = deferred();
        let refusal: unknown;
        const worker = newWorker(lh, {
          queues: 'billing',
          retryBackoff: { baseMs: 3_600_000, capMs: 3_600_000 },
          handler: async (job, ctx) => {
            await gate.promise; // ignores its signal, then tries to complete late
            const client = await pool.connect();
            try {
              await client.query('BEGIN');
              await client.query(`INSERT INTO "${schema}".invoices VALUES ($1)`, [job.id]);
              await ctx.complete(client, 'too late').catch((error: unknown) => {
                refusal = error;
              });
              await client.query(refusal ? 'ROLLBACK' : 'COMMIT');
            } finally {
              client.release();
            }
          },
        });
        const events = record(worker);
        await worker.start();
        try {
          await pumpUntil(clock, 'the timeout failure', () => events.failed.length === 1, {
            stepMs: 20,
          });
          gate.resolve();
          await pumpUntil(clock, 'the late handler to settle', () => worker.abandoned === 0);
        } finally {
          gate.resolve();
          await worker.stop();
        }
        assert.ok(refusal instanceof JobTimeoutError, 'complete(tx) refused with the timeout');
        assert.deepEqual(events.log, ['started', 'failed']);
        const { rows } = await pool.query(`SELECT job_id FROM "${schema}".invoices`);
        assert.deepEqual(rows, [], 'the business write rolled back with it');
        const job = (await engine.jobGet({ id: queued.id }))!;
        assert.equal(job.status, 'pending');
        assert.equal(job.result, null);
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );

    conformanceCase(
      h,
      'frees the slot at the timeout: a hung handler does not block the next job',
      async ({ lh, clock, engine }) => {
        const hung = await lh.queue('one').enqueue('hung', { timeout: 500, priority: 1 });
        const next = await lh.queue('one').enqueue('next', { maxAttempts: 1 });
        let abandonedWhenNextRan: number | undefined;
        const worker: Worker = newWorker(lh, {
          queues: 'one',
          concurrency: 1,
          retryBackoff: { baseMs: 3_600_000, capMs: 3_600_000 },
          handler: async (job) => {
            if (job.payload === 'hung') return NEVER;
            abandonedWhenNextRan = worker.abandoned;
            return 'ok';
          },
        });
        const events = record(worker);
        await worker.start();
        try {
          await pumpUntil(
            clock,
            'the next job completed',
            async () =>
              (await engine.jobGet({ id: next.id }))?.status === 'completed' &&
              events.failed.length > 0, // the failure's event may follow the next job's outcome
            { stepMs: 20 },
          );
          // The failure's write and the next claim race each other: only the starts are ordered.
          assert.deepEqual(
            events.started.map((j) => j.id),
            [hung.id, next.id],
          );
          assert.deepEqual(
            events.failed.map((f) => [f.job.id, f.timedOut]),
            [[hung.id, true]],
          );
          assert.equal(abandonedWhenNextRan, 1, 'the next job ran in the slot the timeout freed');
          assert.equal(worker.abandoned, 1, 'the hung handler is counted, not forgotten');
          assert.equal((await engine.jobGet({ id: hung.id }))?.status, 'pending');
        } finally {
          await worker.stop();
        }
        // An abandoned handler does not hold up a stop either.
        assert.equal(worker.state, 'stopped');
      },
    );

    conformanceCase(
      h,
      "refuses a bad worker timeout with invalid_argument naming 'timeout'",
      async ({ lh }) => {
        const handler = async (): Promise<void> => {};
        for (const timeout of [0, -1, 'soon', '8d', null]) {
          assert.throws(
            () => lh.worker({ queues: 'q', handler, timeout: timeout as never }),
            (e: unknown) =>
              isLeaseholdError(e, 'invalid_argument') && e.details['field'] === 'timeout',
            String(timeout),
          );
        }
      },
    );
  });
}

/** The worker's job events in order, and the payloads of the ones the cases look into. */
function record(worker: Worker): {
  log: string[];
  started: Job[];
  failed: WorkerEvents['job:failed'][];
} {
  const seen = {
    log: [] as string[],
    started: [] as Job[],
    failed: [] as WorkerEvents['job:failed'][],
  };
  worker.events.on('job:started', ({ job }) => {
    seen.log.push('started');
    seen.started.push(job);
  });
  worker.events.on('job:completed', () => seen.log.push('completed'));
  worker.events.on('job:failed', (e) => {
    seen.log.push('failed');
    seen.failed.push(e);
  });
  worker.events.on('job:lost', () => seen.log.push('lost'));
  return seen;
}

/** A worker not yet started, so that `record` sees its first job's start. */
function newWorker(lh: Leasehold, options: WorkerOptions): Worker {
  return lh.worker({ pollInterval: 200, flushWindow: 0, ...options });
}
