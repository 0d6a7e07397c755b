import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { RunUntilEmptyResult } from '../../../src/queue/run-until-empty.js';
import { pumpUntil } from '../../support/manual-time.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/**
 * `worker.runUntilEmpty()` on every engine (decision 0259): it runs what is ready, then stops
 * and answers what happened; what is not ready (scheduled later, in a retry backoff) is left.
 * Time is the harness's ManualClock, pumped until the run answers.
 */
export function runUntilEmptyCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: run until empty`, () => {
    conformanceCase(
      h,
      'runs what is ready, leaves what is not, stops, and counts the outcomes',
      async ({ lh, clock, engine }) => {
        const queue = lh.queue('cron');
        const ok = await queue.enqueueMany([1, 2, 3].map((n) => ({ payload: { n } })));
        const doomed = await queue.enqueue({ fail: 'dead' }, { maxAttempts: 1 });
        const again = await queue.enqueue({ fail: 'retry' }, { maxAttempts: 3 });
        const later = await queue.enqueue({ n: 4 }, { delay: '1h' });
        const worker = lh.worker({
          queues: 'cron',
          concurrency: 2,
          pollInterval: 200,
          flushWindow: 0,
          retryBackoff: { baseMs: 600_000, capMs: 600_000 },
          handler: async (job) => {
            const fail = (job.payload as { fail?: string }).fail;
            if (fail) throw new Error(`failing on purpose (${fail})`);
            return 'done';
          },
        });
        let answer: RunUntilEmptyResult | undefined;
        const run = worker.runUntilEmpty({ timeout: '10m' }).then((r) => (answer = r));
        await pumpUntil(clock, 'the run answered', () => answer, { stepMs: 20 });
        await run;
        assert.deepEqual(answer, {
          completed: 3,
          retried: 1,
          dead: 1,
          lost: 0,
          slept: 0,
          handedBack: 0,
          empty: true,
        });
        assert.equal(worker.state, 'stopped');
        const status = async (id: number) => (await engine.jobGet({ id }))?.status;
        for (const job of ok) assert.equal(await status(job.id), 'completed');
        assert.equal(await status(doomed.id), 'dead');
        assert.equal(await status(again.id), 'pending', 'in its backoff: not ready');
        assert.equal(await status(later.id), 'pending', 'scheduled later: not ready');
      },
    );

    conformanceCase(
      h,
      'at its timeout hands back what still runs, and refuses a bad timeout',
      async ({ lh, clock, engine }) => {
        const job = await lh.queue('stuck').enqueue({});
        let started = false;
        const worker = lh.worker({
          queues: 'stuck',
          pollInterval: 200,
          handler: async (_job, ctx) => {
            started = true;
            // Runs until its signal fires (the hand-back at the timeout).
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
          },
        });
        await assert.rejects(
          () => worker.runUntilEmpty({ timeout: -1 }),
          (e) => isLeaseholdError(e, 'invalid_argument'),
        );
        assert.equal(worker.state, 'idle', 'a refused call starts nothing');
        let answer: RunUntilEmptyResult | undefined;
        const run = worker.runUntilEmpty({ timeout: '2s' }).then((r) => (answer = r));
        await pumpUntil(clock, 'the handler started', () => started, { stepMs: 20 });
        await pumpUntil(clock, 'the run answered at its timeout', () => answer, { stepMs: 100 });
        await run;
        assert.equal(answer?.empty, false);
        assert.equal(answer?.handedBack, 1);
        assert.equal(answer?.completed, 0);
        const stored = await engine.jobGet({ id: job.id });
        assert.equal(stored?.status, 'pending', 'handed back: pending again');
        assert.equal(stored?.attempts, 0, 'its attempt given back');
      },
    );
  });
}
