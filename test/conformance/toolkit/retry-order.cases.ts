import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Leasehold } from '../../../src/leasehold.js';
import type { Worker } from '../../../src/queue/worker.js';
import type { WorkerOptions } from '../../../src/queue/worker-options.js';
import { pumpUntil } from '../../support/manual-time.js';
import { deferred } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/** A handler's promise that never settles: the handler ignores its signal for good. */
const NEVER = new Promise<never>(() => {});

/**
 * A retry with no backoff can be claimed by the same worker while its failed attempt's outcome
 * is still on its way back from the engine. The two attempts are two runs of one job: the
 * worker reports the first one's failure before the second one's start, and counts the second
 * one in flight until it is done (it once keyed runs by job id, so the first attempt's end
 * forgot the second one). The backoff's random draw is pinned to 0 so the retry is ready at
 * once; a drawn backoff of 0 ms is what made this a one-in-a-hundred failure before.
 */
export function retryOrderCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: an immediate retry in the same worker`, () => {
    for (const cause of ['thrown', 'timed out'] as const) {
      conformanceCase(
        h,
        `reports the ${cause} attempt's failure before the retry starts, and counts the retry in flight`,
        async ({ lh, clock, engine }) => {
          const queued = await lh
            .queue('again')
            .enqueue({}, { maxAttempts: 3, ...(cause === 'timed out' ? { timeout: 500 } : {}) });
          const gate = deferred();
          const worker = newWorker(lh, {
            queues: 'again',
            retryBackoff: { baseMs: 1_000, capMs: 1_000 },
            random: () => 0,
            handler: async (_job, ctx) => {
              if (ctx.attempt === 1) {
                if (cause === 'thrown') throw new Error('first attempt fails');
                return NEVER;
              }
              await gate.promise;
              return 'second';
            },
          });
          const log: string[] = [];
          worker.events.on('job:started', ({ job }) => log.push(`started ${job.attempts}`));
          worker.events.on('job:failed', ({ job }) => log.push(`failed ${job.attempts}`));
          worker.events.on('job:completed', ({ job }) => log.push(`completed ${job.attempts}`));
          await worker.start();
          try {
            await pumpUntil(clock, 'the retry to start', () => log.includes('started 2'), {
              stepMs: 20,
            });
            assert.deepEqual(log, ['started 1', 'failed 1', 'started 2']);
            assert.equal(worker.inFlight, 1, 'the retry is in flight');
            gate.resolve();
            const done = await pumpUntil(
              clock,
              'the retry to complete',
              async () => {
                const job = await engine.jobGet({ id: queued.id });
                return job?.status === 'completed' && log.includes('completed 2') ? job : null;
              },
              { stepMs: 20 },
            );
            assert.equal(done.attempts, 2);
            assert.equal(done.result, 'second');
            assert.deepEqual(log, ['started 1', 'failed 1', 'started 2', 'completed 2']);
            assert.equal(worker.inFlight, 0);
          } finally {
            gate.resolve();
            await worker.stop();
          }
        },
      );
    }
  });
}

function newWorker(lh: Leasehold, options: WorkerOptions): Worker {
  return lh.worker({ pollInterval: 200, flushWindow: 0, ...options });
}
