/**
 * Actions on a selection of jobs by id (issue 30 part 2, decision 0266): the explorer's "retry /
 * cancel / delete the checked jobs". Each id is the one-job action (`lh.jobs.retry` etc.), so
 * its rules and fencing are exactly those; the answer says, for each id in the order given,
 * what became of it. The list is validated whole first (bad input changes nothing) and bounded,
 * so one call is at most SELECTION_MAX short statements; acting on more is the filter's job
 * (`lh.queue(name).retryAll`).
 */
import { typeName } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { Job, JobStatus } from '../core/types.js';
import { requireSafeInteger } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';
import { mapLimited } from '../runtime/map-limited.js';
import type { BulkAction } from './bulk-operations.js';

/** The most ids one call acts on. */
export const SELECTION_MAX = 500;

/** One-job actions run at once per call: a few connections, not the whole pool. */
const IN_PARALLEL = 4;

export type SelectionOutcome =
  /** The action applied: the job is now pending again / cancelled / gone. */
  | 'done'
  /** No such job. */
  | 'not_found'
  /** The job is in a status the action never applies to (`status` says which). */
  | 'refused';

export interface SelectionResult {
  readonly id: number;
  readonly outcome: SelectionOutcome;
  /** The job's status after the call; absent when it is gone or never was. */
  readonly status?: JobStatus;
  /** The job after a retry or cancel that applied (for the caller's events). */
  readonly job?: Job;
}

/** The distinct ids of `ids`, in order, or invalid_argument naming `ids`. */
export function toSelection(ids: unknown): number[] {
  if (!Array.isArray(ids))
    throw new InvalidArgumentError('ids', `must be an array of job ids, got ${typeName(ids)}`);
  if (ids.length === 0) throw new InvalidArgumentError('ids', 'must name at least one job');
  if (ids.length > SELECTION_MAX)
    throw new InvalidArgumentError(
      'ids',
      `must name at most ${SELECTION_MAX} jobs, got ${ids.length}`,
    );
  return [...new Set(ids.map((id: unknown, i) => requireSafeInteger(`ids[${i}]`, id, 1)))];
}

export function toSelectionAction(action: unknown): BulkAction {
  if (action === 'retry' || action === 'cancel' || action === 'delete') return action;
  throw new InvalidArgumentError(
    'action',
    `must be retry, cancel or delete, got ${typeof action === 'string' ? JSON.stringify(action) : typeName(action)}`,
  );
}

export async function actOnSelection(
  engine: Engine,
  action: BulkAction,
  ids: readonly number[],
): Promise<SelectionResult[]> {
  return mapLimited(ids, IN_PARALLEL, async (id): Promise<SelectionResult> => {
    if (action === 'delete') {
      if (await engine.jobDelete({ id })) return { id, outcome: 'done' };
      return refusedOrMissing(engine, id);
    }
    const job = action === 'retry' ? await engine.jobRetry({ id }) : await engine.jobCancel({ id });
    // jobCancel answers a job already finished unchanged: cancelled only if it is cancelled now.
    if (job && (action === 'retry' || job.status === 'cancelled'))
      return { id, outcome: 'done', status: job.status, job };
    return job ? { id, outcome: 'refused', status: job.status } : refusedOrMissing(engine, id);
  });
}

async function refusedOrMissing(engine: Engine, id: number): Promise<SelectionResult> {
  const current = await engine.jobGet({ id });
  return current
    ? { id, outcome: 'refused', status: current.status }
    : { id, outcome: 'not_found' };
}
