/**
 * The job administration family of the engine seam: what operators, the API and maintenance do
 * to jobs, one by id or many by match, and every read of jobs. A worker's own side of a job
 * (enqueue, claim, renew, progress, complete, fail, hand back) is the job family (jobs.ts), and
 * its rules hold here too: every time comparison uses the engine's clock, a change that makes a
 * job claimable now notifies `jobs`, and a waited job that finishes or is deleted notifies
 * `job-finished`.
 *
 * Operations over many jobs (jobRetryMatching, jobCancelMatching, jobDeleteMatching) change
 * one bounded batch per call: the `limit` newest matching jobs among the jobs just below
 * `beforeId` (SCAN_FACTOR x `limit` of them at most), locked in id order, each changed only
 * if the operation applies to it now. The caller walks the batches downwards from the
 * answer's `next` (decision 0250).
 */
import type { BackoffPolicy } from '../core/backoff.js';
import type { Job, JobStatus } from '../core/types.js';

/** The error a rescued job records: its worker stopped renewing before the lease ran out. */
export const LEASE_EXPIRED = 'lease expired: the worker stopped renewing';

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

export interface JobAdminOperations {
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
