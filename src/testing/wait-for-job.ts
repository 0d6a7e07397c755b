/**
 * `waitForJob(lh, id)`: resolves with the job once it reaches a status you wait for (by default
 * any finished one: completed, dead or cancelled). A test enqueues, lets a worker run, and then
 * asserts on the job as stored instead of sleeping.
 */
import { ConflictError, NotFoundError } from '../core/errors.js';
import { JOB_STATUSES, type Job, type JobStatus } from '../core/types.js';
import { requireOneOf, requireSafeInteger } from '../core/validate.js';
import type { Leasehold } from '../leasehold.js';
import { pollUntil, resolveWait, type WaitOptions } from './poll.js';

/** The statuses a job rests in until an operator retries it. */
export const FINISHED_STATUSES: readonly JobStatus[] = ['completed', 'dead', 'cancelled'];

export interface WaitForJobOptions extends WaitOptions {
  /** The status (or any of the statuses) to wait for; default any finished status. */
  status?: JobStatus | readonly JobStatus[];
}

/**
 * Resolves with the job as stored once its status is one of `status`. Rejects with
 * - `TimeoutError` (code `timeout`, details `{ jobId, status, awaited, timeoutMs }`) when the
 *   timeout passes first;
 * - `ConflictError` (details `{ jobId, status, awaited }`) when the job finishes in a status you
 *   did not wait for (dead while you waited for completed): waiting on would only time out;
 * - `NotFoundError` when there is no such job, or it was deleted while you waited (a worker with
 *   `removeOnComplete` deletes a job as it completes: wait for its handler instead);
 * - `InvalidArgumentError` for a bad id, status or duration, before anything is read.
 */
export async function waitForJob(
  lh: Leasehold,
  jobId: number,
  options: WaitForJobOptions = {},
): Promise<Job> {
  const id = requireSafeInteger('jobId', jobId, 1);
  const awaited = awaitedStatuses(options.status);
  const wait = resolveWait(options);
  return pollUntil<Job>(
    wait,
    async () => {
      const job = await lh.engine.jobGet({ id });
      if (job === null) throw new NotFoundError('job', id);
      if (awaited.includes(job.status)) return { done: true, value: job };
      if (FINISHED_STATUSES.includes(job.status))
        throw new ConflictError(
          `job ${id} is ${job.status}, which is not what was awaited (${awaited.join(' or ')})`,
          { jobId: id, status: job.status, awaited },
        );
      return { done: false, state: { jobId: id, status: job.status, awaited } };
    },
    (state, timeoutMs) =>
      `job ${id} was still ${String(state.status)} after ${timeoutMs} ms (awaited ${awaited.join(' or ')})`,
  );
}

function awaitedStatuses(status: WaitForJobOptions['status']): readonly JobStatus[] {
  if (status === undefined) return FINISHED_STATUSES;
  const list: readonly unknown[] = Array.isArray(status) ? status : [status];
  if (list.length === 0) return FINISHED_STATUSES;
  return list.map((s, n) =>
    requireOneOf(Array.isArray(status) ? `status[${n}]` : 'status', s, JOB_STATUSES),
  );
}
