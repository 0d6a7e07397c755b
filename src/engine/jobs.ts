/**
 * The job and worker families of the engine seam: the contract between the queue engine
 * (PostgreSQL and memory) and everything above it (queue API, worker, maintenance, HTTP tasks).
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
 * - Operations over many jobs (jobRetryMatching, jobCancelMatching, jobDeleteMatching) change
 *   one bounded batch per call: the `limit` newest matching jobs among the jobs just below
 *   `beforeId` (SCAN_FACTOR x `limit` of them at most), locked in id order, each changed only
 *   if the operation applies to it now. The caller walks the batches downwards from the
 *   answer's `next` (decision 0250).
 * - Enqueue, and every change that makes a job claimable now (retry with no delay, hand-back,
 *   rescue), notifies topic `jobs` with the queue name as payload: once per statement and
 *   queue, never per row.
 * - A job someone waits for (marked by `jobWatch`) that finishes (completed, dead, cancelled) or
 *   is deleted notifies topic `job-finished` with the ids of such jobs, comma-separated: once
 *   per statement, never per row, and never for jobs nobody waits for. More than
 *   FINISHED_IDS_MAX ids are sent as '' (every waiter looks again).
 */
import type { BackoffPolicy } from '../core/backoff.js';
import type {
  FencingToken,
  Job,
  JobProgress,
  JobStatus,
  WorkerInfo,
  WorkerKind,
  WorkerStatus,
} from '../core/types.js';
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

export interface JobListParams {
  queue?: string;
  status?: JobStatus;
  partitionKey?: string;
  limit: number;
  offset: number;
}

/**
 * The job explorer's search (decision 0266): every given field must match. A page reads at most
 * SEARCH_SCAN_ROWS jobs (of any queue) from `cursor` on in `order`, so a search costs the same
 * however sparse its matches or large the table; a page that found fewer than `limit` matches
 * in a scan that ran its full length still answers a `next`.
 */
export interface JobSearchParams {
  queue?: string;
  /** Not empty when given. */
  statuses?: readonly JobStatus[];
  type?: string;
  key?: string;
  partitionKey?: string;
  /** Created at or after this instant. */
  createdSince?: Date;
  /** Created before this instant. */
  createdBefore?: Date;
  /** Case-insensitive substring of the payload's JSON text (jsonb's `payload::text`). */
  text?: string;
  /** `newest`: id descending; `oldest`: id ascending. */
  order: 'newest' | 'oldest';
  /** Only jobs past this id in `order`: the previous page's `next`. Absent: from the start. */
  cursor?: number;
  limit: number;
  /** The most jobs this page reads (default SEARCH_SCAN_ROWS; the conformance suite's is small). */
  scanLimit?: number;
}

export interface JobSearchPage {
  readonly jobs: Job[];
  /** The next page's `cursor`; null when no matching job is left past this page. */
  readonly next: number | null;
  /** How many jobs match the filter in all (whatever the cursor). */
  readonly total: number;
  /**
   * Whether `total` is a count. PostgreSQL counts only when the first page holds every match;
   * otherwise `total` is the planner's estimate of the filter's rows (EXPLAIN), never a count.
   */
  readonly totalExact: boolean;
}

/** The most jobs one search page reads, matching or not (see JobSearchParams). */
export const SEARCH_SCAN_ROWS = 20_000;

export interface JobCount {
  readonly queue: string;
  readonly status: JobStatus;
  readonly count: number;
}

export interface JobRescueParams {
  /** At most this many jobs per call (bounded batches keep each transaction short). */
  limit: number;
  /** Backoff before the rescued job may run again, by its attempt count. */
  backoff: BackoffPolicy;
}

export interface JobRescueResult {
  readonly rescued: number;
  readonly deadLettered: number;
}

export interface JobPruneParams {
  /** Delete completed, dead and cancelled jobs finished longer ago than this. */
  olderThanMs: number;
  limit: number;
}

/**
 * Which jobs of one queue an operation over many jobs selects: every given field must match.
 * The library fills in the statuses (those the operation applies to when the caller names
 * none); a status the operation cannot change selects nothing to change.
 */
export interface JobMatch {
  queue: string;
  /** Not empty. */
  statuses: readonly JobStatus[];
  type?: string;
  key?: string;
  partitionKey?: string;
  /** Created at or after this instant. */
  createdSince?: Date;
  /** Created before this instant. */
  createdBefore?: Date;
}

/**
 * A batch reads at most this many jobs (of any queue, newest first below `beforeId`) per job it
 * may change: `limit` x SCAN_FACTOR. Its cost is bounded however sparse the matches are; a batch
 * that found fewer than `limit` matching jobs in its scan still answers a `next` when the scan
 * ran its full length.
 */
export const SCAN_FACTOR = 10;

export interface JobBatchParams {
  match: JobMatch;
  /** Only jobs with a smaller id: the previous batch's `next`. Absent: from the newest job. */
  beforeId?: number;
  /** At most this many jobs are changed by this call (and SCAN_FACTOR times as many read). */
  limit: number;
}

export interface JobBatchOutcome {
  /** How many jobs this batch changed. */
  readonly changed: number;
  /** The next batch's `beforeId`; null when no matching job is left below this batch. */
  readonly next: number | null;
}

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
  /** Pending or processing -> cancelled. Returns the job as it now is; null when unknown. */
  jobCancel(params: { id: number }): Promise<Job | null>;
  /** Dead, cancelled or completed -> pending with attempts reset; null when unknown or live. */
  jobRetry(params: { id: number }): Promise<Job | null>;
  /** Deletes a job that is not processing; false when unknown or processing. */
  jobDelete(params: { id: number }): Promise<boolean>;
  /**
   * One batch of retries: each matching dead, cancelled or completed job -> pending with
   * attempts reset. A job whose key a live job holds is left as it is; of several matching jobs
   * sharing a key, the newest is retried (the walk goes newest first).
   */
  jobRetryMatching(params: JobBatchParams): Promise<JobBatchOutcome>;
  /** One batch of cancels: each matching pending or processing job -> cancelled. */
  jobCancelMatching(params: JobBatchParams): Promise<JobBatchOutcome>;
  /** One batch of deletes: each matching job that is not processing is deleted. */
  jobDeleteMatching(params: JobBatchParams): Promise<JobBatchOutcome>;
  jobGet(params: { id: number }): Promise<Job | null>;
  /**
   * Marks a job as waited for, so that its finish notifies `job-finished`, and answers it as it
   * is once marked (the newest committed state: a finish that commits later sees the mark).
   * Null when unknown. Callers mark only a job they found live.
   */
  jobWatch(params: { id: number }): Promise<Job | null>;
  jobList(params: JobListParams): Promise<Job[]>;
  /** One page of the job explorer's search (decision 0266), with an approximate total. */
  jobSearch(params: JobSearchParams): Promise<JobSearchPage>;
  jobCounts(): Promise<JobCount[]>;
  /** Expired processing jobs -> pending with backoff, or dead at max attempts. */
  jobRescueExpired(params: JobRescueParams): Promise<JobRescueResult>;
  /** Deletes finished jobs past the retention window; returns how many. */
  jobPrune(params: JobPruneParams): Promise<number>;
}

export interface WorkerRegisterParams {
  id: string;
  name: string;
  host: string;
  pid: number;
  queues: readonly string[];
  concurrency: number;
  /** Default `library`. */
  kind?: WorkerKind;
}

export interface WorkerOperations {
  workerRegister(params: WorkerRegisterParams): Promise<WorkerInfo>;
  /** Refreshes last_seen_at and in-flight; sets status when given. Null when unknown. */
  workerHeartbeat(params: {
    id: string;
    inFlight: number;
    status?: WorkerStatus;
  }): Promise<WorkerInfo | null>;
  workerList(params: { status?: WorkerStatus; limit: number }): Promise<WorkerInfo[]>;
  /** Alive or draining workers silent longer than `silentForMs` -> dead; returns how many. */
  workerMarkDead(params: { silentForMs: number; limit: number }): Promise<number>;
}
