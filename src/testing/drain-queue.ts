/**
 * `drainQueue(lh, queue)`: resolves once a queue has nothing pending, processing or waiting,
 * with the queue's final counts per status. A test enqueues a batch, starts workers, awaits
 * the drain and asserts on what completed and what was dead-lettered.
 */
import { JOB_STATUSES, type JobStatus } from '../core/types.js';
import { requireName } from '../core/validate.js';
import type { Leasehold } from '../leasehold.js';
import type { Queue } from '../queue/queue.js';
import { pollUntil, resolveWait, type WaitOptions } from './poll.js';

/** How many jobs of a queue are in each status. */
export type QueueCounts = Record<JobStatus, number>;

/**
 * Resolves with the queue's counts once none of its jobs is pending, processing or waiting (a
 * flow's parent waiting for its children, decision 0255: it runs later). A pending job
 * delayed into the future (`runAt`, `delay`, a retry's backoff) counts as queued: the drain waits
 * for it to run, so advance a ManualClock yourself if one holds it back. Rejects with
 * `TimeoutError` (details `{ queue, pending, processing, waiting, timeoutMs }`) when the timeout passes
 * first, `InvalidArgumentError` for a bad queue name or duration.
 */
export async function drainQueue(
  lh: Leasehold,
  queue: string | Queue,
  options: WaitOptions = {},
): Promise<QueueCounts> {
  const name = requireName('queue', typeof queue === 'string' ? queue : queue?.name);
  const wait = resolveWait(options);
  return pollUntil<QueueCounts>(
    wait,
    async () => {
      const counts = await countsOf(lh, name);
      if (counts.pending === 0 && counts.processing === 0 && counts.waiting === 0)
        return { done: true, value: counts };
      return {
        done: false,
        state: {
          queue: name,
          pending: counts.pending,
          processing: counts.processing,
          waiting: counts.waiting,
        },
      };
    },
    (state, timeoutMs) =>
      `queue "${name}" still had ${String(state.pending)} pending, ${String(state.processing)} processing and ${String(state.waiting)} waiting jobs after ${timeoutMs} ms`,
  );
}

async function countsOf(lh: Leasehold, queue: string): Promise<QueueCounts> {
  const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as QueueCounts;
  for (const row of await lh.engine.jobCounts())
    if (row.queue === queue) counts[row.status] += row.count;
  return counts;
}
