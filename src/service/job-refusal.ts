/**
 * Why an operator action on a job (retry, cancel, delete) was refused, as the error to answer
 * with. Shared by the job and task routes and the CLI so that one state gives one code
 * everywhere: `task_done` only for a job that has finished, `conflict` for a live job that the
 * action does not apply to.
 */
import { ConflictError, TaskDoneError, type LeaseholdError } from '../core/errors.js';
import type { Job } from '../core/types.js';

export type JobAction = 'retry' | 'cancel' | 'delete';

export function jobRefusal(action: JobAction, job: Job): LeaseholdError {
  const details = { id: job.id, status: job.status };
  switch (action) {
    case 'retry':
      return new ConflictError(
        `job ${job.id} is ${job.status}: only a completed, dead or cancelled job can be retried`,
        details,
      );
    case 'cancel':
      return new TaskDoneError(job.id, job.status);
    case 'delete':
      return new ConflictError(
        `job ${job.id} is ${job.status}: cancel it before deleting it`,
        details,
      );
  }
}
