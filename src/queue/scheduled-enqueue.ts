/**
 * Schedules that enqueue (issue 27 part 7; decision 0248): `lh.schedule(name, { cron, enqueue:
 * { queue, payload, options } })`. Each slot, run on one instance by the schedule's own slot
 * claim, enqueues one durable job, which is then retried and dead-lettered like any job. The
 * job's dedup key is the schedule and the slot (`schedule:<name>:<slot ISO>`), so a slot run a
 * second time while its job is still pending or running (a run lock that expired mid-enqueue)
 * answers the same job instead of a second one.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { ScheduledFunction } from '../schedules/slot-run.js';
import type { ScheduledEnqueue } from '../schedules/schedule-options.js';
import { toJobSpec } from './enqueue-options.js';
import type { Queue } from './queue.js';

/** Enqueue options a scheduled enqueue decides itself. */
const SLOT_OWNED = ['key', 'onConflict', 'debounce', 'tx'] as const;

/** The key of a slot's job. */
export function slotJobKey(schedule: string, slot: Date): string {
  return `schedule:${schedule}:${slot.toISOString()}`;
}

/**
 * Checks `enqueue` once, when the schedule is declared (a bad option fails there, not at the
 * first slot), and answers the function each slot runs.
 */
export function scheduledEnqueue(
  schedule: string,
  enqueue: unknown,
  queueOf: (name: string) => Queue,
): ScheduledFunction {
  if (typeof enqueue !== 'object' || enqueue === null)
    throw new InvalidArgumentError('enqueue', 'must be an object { queue, payload?, options? }');
  const e = enqueue as ScheduledEnqueue;
  if (e.options !== undefined && (typeof e.options !== 'object' || e.options === null))
    throw new InvalidArgumentError('enqueue.options', 'must be an object');
  // A slot's key makes its job once per slot: replacing or debouncing it could run a slot twice.
  if (e.options && SLOT_OWNED.some((name) => name in e.options!))
    throw new InvalidArgumentError(
      'enqueue.options',
      'takes no key, onConflict or debounce (each slot is keyed by the schedule and the slot, one job per slot) and no tx',
    );
  const payload = e.payload ?? null;
  const options = e.options ?? {};
  try {
    toJobSpec(e.queue, payload, { ...options, key: slotJobKey(schedule, new Date(0)) });
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    // The queue and the payload are fields of `enqueue`; everything else is an enqueue option.
    const ofEnqueue = error.field === 'queue' || error.field === 'payload';
    throw error.within(ofEnqueue ? 'enqueue.' : 'enqueue.options.');
  }
  const queue = queueOf(e.queue);
  return async (run) => {
    const job = await queue.enqueue(payload, { ...options, key: slotJobKey(schedule, run.slot) });
    return { jobId: job.id, created: job.created };
  };
}
