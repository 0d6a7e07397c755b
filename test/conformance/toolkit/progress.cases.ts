import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { Engine } from '../../../src/engine/engine.js';
import { Leasehold } from '../../../src/leasehold.js';
import type { JobContext } from '../../../src/queue/worker-options.js';
import type { WorkerEvents } from '../../../src/queue/worker.js';
import { faultyEngine } from '../../support/faulty-engine.js';
import { pumpFor, pumpUntil } from '../../support/manual-time.js';
import { deferred } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/** Values `ctx.progress` refuses, each with invalid_argument naming `progress`. */
const BAD_PROGRESS: readonly unknown[] = [
  -1,
  100.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '50',
  null,
  undefined,
  [1, 2],
  true,
  { big: 'x'.repeat(64 * 1024) },
  { nul: 'a\u0000b' },
];

/**
 * `ctx.progress` (decision 0251) on every engine: stored on the job and read back through
 * `lh.jobs.get`, written at most once per 250 ms whatever the handler's rate (counted as engine
 * calls while a ManualClock moves, never timed), fenced like every outcome, and bad input refused.
 */
export function progressCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: progress`, () => {
    conformanceCase(
      h,
      'stores the latest progress in a few writes however chatty the handler; dropped at completion, written before a failure',
      async ({ engine, clock }) => {
        const probe = faultyEngine(engine);
        const lh = Leasehold.fromEngine(probe.engine);
        const queued = await lh.queue('reports').enqueue({}, { maxAttempts: 2 });
        const writes = (): number => probe.calls('jobProgress');
        let context: JobContext | undefined;
        const finish = deferred<'fail' | 'return'>();
        const worker = lh.worker({
          queues: 'reports',
          pollInterval: 50,
          flushWindow: 0,
          // The backoff draw pinned to the middle: the retry is due 50 ms of the clock after the
          // failure's write, so the failed attempt can be read before the retry's claim clears
          // its progress (a draw of 0, one in 101 unpinned, let the worker claim it at once).
          retryBackoff: { baseMs: 100, capMs: 100 },
          random: () => 0.5,
          handler: async (_job, ctx) => {
            if (ctx.attempt === 2) {
              ctx.progress(77); // not written yet when the completion supersedes it
              return 'done';
            }
            context = ctx;
            if ((await finish.promise) === 'fail') throw new Error('failed at a third');
            return null;
          },
        });
        await worker.start();
        try {
          const ctx = await pumpUntil(clock, 'the handler to start', () => context);
          const stored = async (): Promise<unknown> => (await lh.jobs.get(queued.id))?.progress;
          assert.equal(await stored(), null);

          // A thousand reports in one go: one leading write, carrying the last.
          for (let i = 1; i <= 1_000; i++) ctx.progress(i / 10);
          await pumpUntil(clock, 'the leading write', async () => (await stored()) === 100);
          assert.equal(writes(), 1);

          // A thousand more over 500 ms of the clock: one write per 250 ms at most.
          for (let step = 0; step < 10; step++) {
            for (let i = 0; i < 100; i++) ctx.progress({ step, i, of: 'a thousand' });
            await pumpFor(clock, 50, 10, () => probe.pending('jobProgress') === 0);
          }
          const latest = { step: 9, i: 99, of: 'a thousand' };
          await pumpUntil(clock, 'the latest value', async () =>
            isDeepStrictEqual(await stored(), latest),
          );
          const burst = writes() - 1;
          assert.ok(burst >= 1 && burst <= 4, `1000 reports over 500 ms took ${burst} writes`);
          assert.equal((await lh.jobs.get(queued.id))?.status, 'processing');

          // Reported and failed in the same turn: written before the failure.
          ctx.progress(33.3);
          finish.resolve('fail');
          const retried = await pumpUntil(clock, 'the failure', async () => {
            const job = await lh.jobs.get(queued.id);
            return job?.errors.length === 1 ? job : null;
          });
          assert.equal(retried.progress, 33.3, 'the failed attempt shows how far it got');

          // The retry reports and returns at once: the completion supersedes the report, and
          // the claim cleared the first attempt's progress.
          const done = await pumpUntil(clock, 'the retry to complete', async () => {
            const job = await lh.jobs.get(queued.id);
            return job?.status === 'completed' ? job : null;
          });
          assert.equal(done.result, 'done');
          assert.equal(done.progress, null);
        } finally {
          finish.resolve('return');
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      'refuses bad progress with invalid_argument and changes nothing; a refused write loses the job',
      async ({ lh, clock, engine }) => {
        const queued = await lh.queue('fenced').enqueue({}, { maxAttempts: 1 });
        let context: JobContext | undefined;
        const hold = deferred();
        const worker = lh.worker({
          queues: 'fenced',
          pollInterval: 200,
          flushWindow: 0,
          handler: async (_job, ctx) => {
            context = ctx;
            await hold.promise;
          },
        });
        const lost: WorkerEvents['job:lost'][] = [];
        worker.events.on('job:lost', (e) => lost.push(e));
        await worker.start();
        try {
          const ctx = await pumpUntil(clock, 'the handler to start', () => context);
          ctx.progress({ phase: 'valid' });
          await pumpUntil(clock, 'the valid value', async () =>
            (await lh.jobs.get(queued.id))?.progress === null ? null : true,
          );
          for (const bad of BAD_PROGRESS) {
            assert.throws(
              () => ctx.progress(bad as number),
              (e) =>
                isLeaseholdError(e, 'invalid_argument') &&
                (e.details as { field?: string }).field === 'progress',
              `refuses ${JSON.stringify(bad)?.slice(0, 40)}`,
            );
          }
          await pumpFor(clock, 600, 50);
          const unchanged = await lh.jobs.get(queued.id);
          assert.deepEqual(unchanged?.progress, { phase: 'valid' }, 'bad input changed nothing');
          assert.equal(ctx.signal.aborted, false);

          // Cancelled behind the worker's back: the next progress write is refused, and the job
          // is lost as when a renewal is refused (long before the next renewal would tell).
          await lh.jobs.cancel(queued.id);
          ctx.progress(90);
          await pumpUntil(clock, 'the signal', () => ctx.signal.aborted);
          assert.ok(isLeaseholdError(ctx.signal.reason, 'lease_lost'));
          assert.equal(lost.length, 1);
          assert.throws(
            () => ctx.progress(95),
            (e) => isLeaseholdError(e, 'lease_lost'),
          );
          const after = await engine.jobGet({ id: queued.id });
          assert.equal(after?.status, 'cancelled');
          assert.deepEqual(after?.progress, { phase: 'valid' }, 'the refused write stored nothing');
        } finally {
          hold.resolve();
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      "a pull consumer's message reports progress too; a stale receiver's is refused",
      async ({ lh, clock, engine }) => {
        const a = lh.queue('pulled');
        const b = lh.queue('pulled'); // another receiver
        const queued = await a.enqueue({}, { maxAttempts: 5 });
        const first = (await a.tryReceive({ visibility: '1s' }))!;
        assert.throws(
          () => first.progress(101),
          (e) => isLeaseholdError(e, 'invalid_argument'),
        );
        first.progress(10);
        await pumpUntil(clock, 'the first value', async () =>
          (await progressOf(engine, queued.id)) === 10 ? true : null,
        );
        await pumpFor(clock, 1_100);
        await engine.jobRescueExpired({ limit: 10, backoff: { baseMs: 0, capMs: 0 } });
        const second = await pumpUntil(clock, 'the second delivery', () =>
          b.tryReceive({ visibility: '5s' }),
        );
        assert.equal(await progressOf(engine, queued.id), null, 'the new claim cleared it');
        second.progress(60);
        first.progress(99); // the stale receiver, whose signal already fired
        await pumpUntil(clock, "the new receiver's value", async () =>
          (await progressOf(engine, queued.id)) === 60 ? true : null,
        );
        // Refused: the message is settled as lost, and its next call says so.
        const refusal = await pumpUntil(clock, 'the stale receiver to learn it', () => {
          try {
            first.progress(99);
            return null;
          } catch (error) {
            return error as Error;
          }
        });
        assert.ok(isLeaseholdError(refusal, 'lease_lost'));
        assert.equal(
          await progressOf(engine, queued.id),
          60,
          "the stale receiver's 99 was refused",
        );
        second.progress(80);
        assert.equal(await second.nack({ reason: 'later' }), 'retried');
        assert.equal(await progressOf(engine, queued.id), 80, 'written before the nack');
      },
    );
  });
}

async function progressOf(engine: Engine, id: number): Promise<unknown> {
  return (await engine.jobGet({ id }))?.progress;
}
