/**
 * Operations over many jobs of one queue (issue 27 part 5; decision 0250): `retryAll`,
 * `cancelAll` and `deleteAll` on `lh.queue(name)`. The filter is validated whole before the
 * first statement, so bad input changes nothing; then the engine changes one bounded batch per
 * statement, newest jobs first, until a batch finds the last matching job. Each batch commits on
 * its own: a million matching jobs are a thousand short statements, none of which holds many
 * rows or runs long, and an operation stopped half way (an error, a lost connection) leaves the
 * batches already done done, so running it again finishes the work.
 */
import { typeName } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { JOB_STATUSES, type JobStatus } from '../core/types.js';
import { requireKnownFields, requireName, requireSafeInteger } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';
import type { JobBatchOutcome, JobBatchParams, JobMatch } from '../engine/job-admin.js';

/** Which jobs of the queue to act on: every given field must match. */
export interface JobFilter {
  /** One status or several; default: every status the operation applies to. */
  status?: JobStatus | readonly JobStatus[];
  type?: string;
  key?: string;
  partitionKey?: string;
  /** Jobs created at or after this instant (a Date, or an ISO 8601 string with its zone). */
  createdSince?: Date | string;
  /** Jobs created before this instant. */
  createdBefore?: Date | string;
}

export interface BulkOptions {
  /** Jobs changed per statement (default 1,000, at most 10,000). */
  batchSize?: number;
}

export type BulkAction = 'retry' | 'cancel' | 'delete';

/** The statuses each operation applies to, as for one job (lh.jobs.retry, cancel, delete). */
export const BULK_STATUSES: Readonly<Record<BulkAction, readonly JobStatus[]>> = {
  retry: ['completed', 'dead', 'cancelled'],
  cancel: ['waiting', 'pending', 'processing'],
  delete: ['waiting', 'pending', 'completed', 'dead', 'cancelled'],
};

export const BULK_BATCH = { default: 1_000, max: 10_000 } as const;

export const FILTER_FIELDS = [
  'status',
  'type',
  'key',
  'partitionKey',
  'createdSince',
  'createdBefore',
] as const;

const BATCH_OF: Record<BulkAction, 'jobRetryMatching' | 'jobCancelMatching' | 'jobDeleteMatching'> =
  {
    retry: 'jobRetryMatching',
    cancel: 'jobCancelMatching',
    delete: 'jobDeleteMatching',
  };

/**
 * The engine's match for `filter` on `queue`, or invalid_argument naming the first bad field:
 * an unknown field, a status the operation never applies to, an empty string, a bad instant,
 * an empty time range.
 */
export function toJobMatch(queue: string, action: BulkAction, filter: unknown): JobMatch {
  const f = requireKnownFields('filter', filter, FILTER_FIELDS, 'filter');
  return { queue, statuses: statusesOf(action, f.status), ...matchFields(f) };
}

/** The fields a bulk filter and a job search share, checked; invalid_argument naming the field. */
export type MatchFields = Pick<
  JobMatch,
  'type' | 'key' | 'partitionKey' | 'createdSince' | 'createdBefore'
>;

export function matchFields(f: Record<string, unknown>): MatchFields {
  const fields: MatchFields = {};
  if (f.type !== undefined) fields.type = requireName('type', f.type);
  if (f.key !== undefined) fields.key = requireName('key', f.key);
  if (f.partitionKey !== undefined)
    fields.partitionKey = requireName('partitionKey', f.partitionKey);
  if (f.createdSince !== undefined) fields.createdSince = instant('createdSince', f.createdSince);
  if (f.createdBefore !== undefined)
    fields.createdBefore = instant('createdBefore', f.createdBefore);
  if (fields.createdSince && fields.createdBefore && fields.createdSince >= fields.createdBefore)
    throw new InvalidArgumentError('createdBefore', 'must be later than createdSince');
  return fields;
}

export function toBatchSize(options: unknown): number {
  if (options === undefined) return BULK_BATCH.default;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError('options', `must be an object, got ${typeName(options)}`);
  const { batchSize } = options as BulkOptions;
  if (batchSize === undefined) return BULK_BATCH.default;
  const size = requireSafeInteger('batchSize', batchSize, 1);
  if (size > BULK_BATCH.max)
    throw new InvalidArgumentError('batchSize', `must be at most ${BULK_BATCH.max}, got ${size}`);
  return size;
}

/** Runs the batches one after another; answers how many jobs they changed in all. */
export async function changeAll(
  engine: Engine,
  action: BulkAction,
  match: JobMatch,
  batchSize: number,
): Promise<number> {
  const batch = (p: JobBatchParams): Promise<JobBatchOutcome> => engine[BATCH_OF[action]](p);
  let changed = 0;
  let beforeId: number | undefined;
  for (;;) {
    const outcome = await batch({ match, limit: batchSize, ...(beforeId ? { beforeId } : {}) });
    changed += outcome.changed;
    if (outcome.next === null) return changed;
    beforeId = outcome.next;
  }
}

function statusesOf(action: BulkAction, status: unknown): JobStatus[] {
  const applicable = BULK_STATUSES[action];
  if (status === undefined) return [...applicable];
  const list: unknown[] = Array.isArray(status) ? status : [status];
  if (list.length === 0) throw new InvalidArgumentError('status', 'must name at least one status');
  const statuses = list.map((s) => {
    if (typeof s !== 'string' || !(JOB_STATUSES as readonly string[]).includes(s))
      throw new InvalidArgumentError(
        'status',
        `must be one of ${JOB_STATUSES.join(', ')}, got ${typeof s === 'string' ? JSON.stringify(s) : typeName(s)}`,
      );
    if (!applicable.includes(s as JobStatus))
      throw new InvalidArgumentError(
        'status',
        `${action} never applies to a ${s} job (it applies to ${applicable.join(', ')})`,
      );
    return s as JobStatus;
  });
  return [...new Set(statuses)];
}

/** An ISO 8601 date, or date and time with its zone (a time without a zone is ambiguous). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** `value` as an instant (a Date or an ISO_INSTANT string); invalid_argument naming `field`. */
export function instant(field: string, value: unknown): Date {
  const date =
    value instanceof Date
      ? new Date(value.getTime())
      : typeof value === 'string' && ISO_INSTANT.test(value)
        ? new Date(value)
        : undefined;
  if (date === undefined || Number.isNaN(date.getTime()))
    throw new InvalidArgumentError(
      field,
      `must be a Date or an ISO 8601 instant such as 2024-05-01T12:00:00Z, got ${typeof value === 'string' ? JSON.stringify(value) : typeName(value)}`,
    );
  return date;
}
