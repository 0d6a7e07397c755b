/**
 * `leasehold/testing`: what our own tests use, shipped to users. A memory engine on a manual
 * clock makes lease timing deterministic: nothing expires until you `advance()` the clock.
 *
 * ```ts
 * const { lh, clock } = memoryLeasehold();
 * const held = await lh.leases.hold('r', { holder: 'a', ttl: '10s' });
 * await clock.advance(30_000); // renewals fire on the manual clock
 * ```
 *
 * `waitForJob` and `drainQueue` wait for the queue's work to be done, on either engine, instead
 * of sleeping:
 *
 * ```ts
 * const job = await lh.queue('emails').enqueue({ to: 'a@example.com' });
 * const done = await waitForJob(lh, job.id, { status: 'completed', timeout: '5s' });
 * const counts = await drainQueue(lh, 'emails'); // { pending: 0, processing: 0, completed: 1, … }
 * ```
 */
import { ManualClock } from '../core/clock.js';
import { Leasehold } from '../leasehold.js';

export { ManualClock } from '../core/clock.js';
export { waitForJob, FINISHED_STATUSES, type WaitForJobOptions } from './wait-for-job.js';
export { drainQueue, type QueueCounts } from './drain-queue.js';
export type { WaitOptions } from './poll.js';
export { MemoryEngine } from '../engine/memory/memory-engine.js';
export {
  startEmbeddedPostgres,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
} from '../embedded/embedded-postgres.js';

export function memoryLeasehold(start?: Date): { lh: Leasehold; clock: ManualClock } {
  const clock = new ManualClock(start);
  return { lh: Leasehold.memory({ clock }), clock };
}
