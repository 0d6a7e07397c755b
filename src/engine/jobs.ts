/**
 * The job family of the engine seam: the contract between the queue engine (PostgreSQL and
 * memory) and everything above it for a job's life as a worker sees it (enqueue, claim, renew,
 * progress, complete, fail, hand back). What operators and maintenance do to jobs, and reads of
 * jobs, are the job administration family (job-admin.ts); workers' rows are workers.ts.
 *
 * Rules every engine obeys (the conformance suite checks each):
 * - Ownership of a processing job is the pair (claimedBy, generation). Renew, progress, complete,
 *   fail and hand-back are guarded by both, and renew and progress also by
 *   `lease_expires_at > now`; an operation
 *   that does not match is not an error, the job is simply left out of the answer.
 * - A claim bumps `generation` and `attempts` in the same statement that takes the job.
 * - At most one job per (queue, partitionKey) is processing at any moment, and a partition's
 *   jobs are claimed in enqueue order (id order): only the oldest unfinished job of a partition
 *   is ever claimable, so a job waiting out a retry backoff holds its partition back, and other
 *   partitions are unaffected.
 * - Claim order otherwise: priority descending, then available_at, then id.
 * - Batch operations are one statement per call (one round trip), whatever the batch size.
 * - Every time comparison uses the engine's clock (`coalesce($now, now())` on PostgreSQL).
 * - Enqueue, and every change that makes a job claimable now (retry with no delay, hand-back,
 *   rescue), notifies topic `jobs` with the queue name as payload: once per statement and
 *   queue, never per row.
 * - A job someone waits for (marked by `jobWatch`) that finishes (completed, dead, cancelled) or
 *   is deleted notifies topic `job-finished` with the ids of such jobs, comma-separated: once
 *   per statement, never per row, and never for jobs nobody waits for. More than
 *   FINISHED_IDS_MAX ids are sent as '' (every waiter looks again).
 */
import type { FencingToken, Job, JobProgress } from '../core/types.js';
import type { CallerTransaction } from './types.js';

/** The notification topic on which claimable work is announced (payload: the queue name). */
export const JOBS_TOPIC = 'jobs';

/** The topic on which waited-for jobs announce that they finished (payload: their ids). */
export const JOB_FINISHED_TOPIC = 'job-finished';

/** Most ids one `job-finished` notification names (8,000 bytes is PostgreSQL's payload limit). */
export const FINISHED_IDS_MAX = 200;

/** The ids a `job-finished` payload names; undefined for '' (any waited job may have finished). */
export function finishedIds(payload: string): number[] | undefined {
  return payload === '' ? undefined : payload.split(',').map(Number);
}

/** The payload announcing that these waited jobs finished. */
export function finishedPayload(ids: readonly number[]): string {
  return ids.length > FINISHED_IDS_MAX ? '' : ids.join(',');
}

export interface JobSpec {
  queue: string;
  /** Any JSON value. */
  payload: unknown;
  type?: string | null;
  key?: string | null;
  headers?: Record<string, string>;
  partitionKey?: string | null;
  priority?: number;
  /** Absolute time at which the job becomes claimable… */
  runAt?: Date | null;
  /** …or a delay from the engine's now (ignored when runAt is given). */
  delayMs?: number;
  maxAttempts: number;
  /** Ms one attempt may run before the worker fails it; null/absent: the worker's default. */
  timeoutMs?: number | null;
  /**
   * When a live job of the queue already has `key` (decision 0252): `keep` (the default) answers
   * it unchanged; `replace` overwrites a pending one with this spec (REPLACED_FIELDS), and
   * answers a processing one unchanged.
   */
  onConflict?: 'keep' | 'replace';
  /**
   * A debounced enqueue (`replace`, with the run time the spec's delay): against a processing
   * job it does not give up but takes the key over, so one more run follows (decision 0252).
   */
  debounce?: boolean;
}

/**
 * What `onConflict: 'replace'` overwrites on a pending job: everything the enqueue says about
 * the run. Its id (its place in its partition's order), partition key, attempts and errors stay.
 */
export const REPLACED_FIELDS = [
  'type',
  'payload',
  'headers',
  'priority',
  'maxAttempts',
  'timeoutMs',
  'availableAt',
] as const;

/**
 * The job an enqueue creates from `spec`, with what only the engine decides: its id, its
 * creation instant and when it becomes claimable. Both engines answer a created job with it, so
 * the fields a new job starts with are written in one place (the conformance suite compares the
 * answer with the stored job). The payload and headers are taken as given: JSON values, as
 * toJobSpec makes them.
 */
export function newJob(spec: JobSpec, id: number, createdAt: Date, availableAt: Date): Job {
  return {
    id,
    queue: spec.queue,
    type: spec.type ?? null,
    key: spec.key ?? null,
    payload: spec.payload ?? null,
    headers: spec.headers ?? {},
    partitionKey: spec.partitionKey ?? null,
    priority: spec.priority ?? 0,
    status: 'pending',
    attempts: 0,
    maxAttempts: spec.maxAttempts,
    availableAt,
    claimedBy: null,
    claimedAt: null,
    leaseExpiresAt: null,
    generation: 0,
    result: null,
    lastError: null,
    errors: [],
    createdAt,
    updatedAt: new Date(createdAt.getTime()), // its own object: a Date can be changed in place
    finishedAt: null,
    timeoutMs: spec.timeoutMs ?? null,
    progress: null,
    parentId: null,
    renewals: 0,
    renewedAt: null,
  };
}

export interface JobEnqueueParams {
  jobs: readonly JobSpec[];
  /** Enqueue inside the caller's transaction: the jobs exist only if it commits. */
  tx?: CallerTransaction;
}

export interface EnqueueOutcome {
  readonly job: Job;
  /** False when a live job with the same (queue, key) existed: `job` is that job. */
  readonly created: boolean;
  /** True when that job was pending and this enqueue overwrote it (`onConflict: 'replace'`). */
  readonly replaced: boolean;
}

/**
 * A claim's answer: the jobs taken, and whether any of the claim's queues has flow-control
 * settings (`limited`). A limited queue's room is counted from the jobs the database sees
 * processing, so a worker claiming for it counts its outcomes not yet written as still running
 * (Producer): claiming before they are written would only come back short.
 */
export type ClaimedJobs = Job[] & { readonly limited?: boolean };

/**
 * Marks a claim's answer as limited. Not enumerable: the answer is still an array of jobs to
 * every comparison and copy (a copy drops the mark, which only costs the worker a short claim).
 */
export function markLimited(jobs: Job[]): ClaimedJobs {
  return Object.defineProperty(jobs, 'limited', { value: true, enumerable: false });
}

export interface JobClaimParams {
  queues: readonly string[];
  workerId: string;
  limit: number;
  leaseTtlMs: number;
  /**
   * Only jobs whose `type` is one of these (a worker that leaves the types it has no handler for
   * to other workers); absent: jobs of any type or none. A job passed over keeps its place: a
   * partition's head of another type still holds its partition back.
   */
  types?: readonly string[];
  /**
   * Only jobs that became available at most this many ms before the claim's own now
   * (`available_at >= now - availableWithinMs`, on the database clock); absent: any. A worker's
   * claims between its full looks pass over the entries of jobs long claimed or deleted at the
   * head of the claim index (decision 0274); older jobs wait for the next full look.
   */
  availableWithinMs?: number;
}

/** Identifies one term of ownership of a job. */
export interface JobLeaseRef {
  id: number;
  generation: FencingToken;
}

export interface JobRenewParams {
  workerId: string;
  jobs: readonly JobLeaseRef[];
  leaseTtlMs: number;
}

export interface JobRenewed {
  readonly id: number;
  readonly leaseExpiresAt: Date;
}

export interface JobProgressReport extends JobLeaseRef {
  /** Replaces the job's progress: a number 0 to 100 or a JSON object (validated above the engine). */
  progress: JobProgress;
}

export interface JobProgressParams {
  workerId: string;
  /** Distinct ids. */
  jobs: readonly JobProgressReport[];
}

export interface JobCompletion extends JobLeaseRef {
  /** Stored on the job; any JSON value. */
  result?: unknown;
}

export interface JobCompleteParams {
  workerId: string;
  jobs: readonly JobCompletion[];
  /** Complete inside the caller's transaction, atomically with its business writes. */
  tx?: CallerTransaction;
  /**
   * Delete the accepted jobs instead of keeping them as `completed` (the worker's
   * `removeOnComplete`): no history and no result, one row write fewer per job.
   */
  remove?: boolean;
}

export interface JobFailure extends JobLeaseRef {
  error: string;
  /** Delay before the retry, chosen by the retry policy above the engine. */
  retryDelayMs: number;
  /** Dead-letter now, whatever attempts remain (a non-retryable error). */
  final?: boolean;
}

export interface JobFailParams {
  workerId: string;
  jobs: readonly JobFailure[];
}

export interface JobFailOutcome {
  readonly id: number;
  readonly outcome: 'retried' | 'dead';
}

/** A worker's side of a job: enqueue, claim, and what the claimer does with what it owns. */
export interface JobOperations {
  /** Inserts the jobs (one statement), or returns the live job of a duplicate key. In order. */
  jobEnqueue(params: JobEnqueueParams): Promise<EnqueueOutcome[]>;
  /** Claims up to `limit` claimable jobs with SKIP LOCKED; bumps generation and attempts. */
  jobClaimBatch(params: JobClaimParams): Promise<ClaimedJobs>;
  /** Extends the leases the worker still owns; a job left out of the answer is lost. */
  jobRenewLeases(params: JobRenewParams): Promise<JobRenewed[]>;
  /**
   * Stores the progress of the jobs the worker still owns, fenced like a renewal (its lease
   * unexpired); returns the ids accepted, in input order. A job left out is lost. Sets
   * `updatedAt` as a renewal does; leaves the lease alone and notifies nothing.
   */
  jobProgress(params: JobProgressParams): Promise<number[]>;
  /** Completes the jobs the worker still owns; returns the ids accepted. */
  jobComplete(params: JobCompleteParams): Promise<number[]>;
  /** Fails the jobs the worker still owns: retry after the delay, or dead letter. */
  jobFail(params: JobFailParams): Promise<JobFailOutcome[]>;
  /** Drain: back to pending at once, giving back the attempt; returns the ids handed back. */
  jobHandBack(params: { workerId: string; jobs: readonly JobLeaseRef[] }): Promise<number[]>;
}
