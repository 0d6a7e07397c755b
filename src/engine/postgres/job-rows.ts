/**
 * Row mapping of the job and worker families: jobs and workers rows as pg returns them
 * (bigint columns arrive as strings, jsonb already parsed) to the domain types of core/types.
 */
import type {
  Job,
  JobAttemptError,
  JobProgress,
  JobStatus,
  WorkerInfo,
  WorkerKind,
  WorkerStatus,
} from '../../core/types.js';
import { JOB_COLUMNS, type JobColumn } from './job-sql.js';
import { toSafeInteger } from './rows.js';

/** A jobs row as the job queries select it (job-sql.ts, JOB_COLUMNS). */
export interface JobRow extends Record<JobColumn, unknown> {
  id: string;
  queue: string;
  type: string | null;
  key: string | null;
  payload: unknown;
  headers: Record<string, string>;
  partition_key: string | null;
  priority: number;
  status: JobStatus;
  attempts: number;
  max_attempts: number;
  available_at: Date;
  claimed_by: string | null;
  claimed_at: Date | null;
  lease_expires_at: Date | null;
  generation: string;
  result: unknown;
  last_error: string | null;
  /** jsonb: `at` is an ISO string. */
  errors: {
    attempt: number;
    at: string;
    error: string;
    worker?: string | null;
    token?: number;
    renewals?: number;
  }[];
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  timeout_ms: number | null;
  progress: JobProgress | null;
  parent_id: string | null;
  renewals: number | null;
  renewed_at: Date | null;
}

export interface WorkerRow {
  id: string;
  name: string;
  host: string;
  pid: number;
  queues: string[];
  concurrency: number;
  status: WorkerStatus;
  started_at: Date;
  last_seen_at: Date;
  in_flight: number;
  kind: WorkerKind;
}

/** Where each column sits in a row fetched as an array (`rowMode: 'array'`, JOB_COLUMNS order). */
const AT = Object.fromEntries(JOB_COLUMNS.map((c, i) => [c, i])) as Record<JobColumn, number>;

/**
 * A job from its column values in JOB_COLUMNS order. The claim, the hottest statement, fetches
 * its rows as arrays: node-postgres then skips building an object per row, a measurable share
 * of a fast worker's CPU; every other statement's rows go through mapJob below.
 */
export function mapJobValues(v: readonly unknown[]): Job {
  const errors = v[AT.errors] as JobRow['errors'];
  return {
    id: toSafeInteger(v[AT.id] as string, 'jobs.id'),
    queue: v[AT.queue] as string,
    type: v[AT.type] as string | null,
    key: v[AT.key] as string | null,
    // SQL NULL and jsonb null both mean a null payload or result.
    payload: v[AT.payload] ?? null,
    headers: v[AT.headers] as Record<string, string>,
    partitionKey: v[AT.partition_key] as string | null,
    priority: v[AT.priority] as number,
    status: v[AT.status] as JobStatus,
    attempts: v[AT.attempts] as number,
    maxAttempts: v[AT.max_attempts] as number,
    availableAt: v[AT.available_at] as Date,
    claimedBy: v[AT.claimed_by] as string | null,
    claimedAt: v[AT.claimed_at] as Date | null,
    leaseExpiresAt: v[AT.lease_expires_at] as Date | null,
    generation: toSafeInteger(v[AT.generation] as string, 'jobs.generation'),
    result: v[AT.result] ?? null,
    lastError: v[AT.last_error] as string | null,
    errors:
      errors.length === 0
        ? []
        : errors.map((e): JobAttemptError => ({
            attempt: e.attempt,
            at: new Date(e.at),
            error: e.error,
            ...(e.worker === undefined ? {} : { worker: e.worker }),
            // jsonb keeps a bigint generation as a number: exact up to 2^53.
            ...(e.token === undefined ? {} : { token: e.token }),
            ...(e.renewals === undefined ? {} : { renewals: e.renewals }),
          })),
    createdAt: v[AT.created_at] as Date,
    updatedAt: v[AT.updated_at] as Date,
    finishedAt: v[AT.finished_at] as Date | null,
    timeoutMs: v[AT.timeout_ms] as number | null,
    progress: (v[AT.progress] as JobProgress | null) ?? null,
    parentId:
      v[AT.parent_id] == null ? null : toSafeInteger(v[AT.parent_id] as string, 'jobs.parent_id'),
    renewals: (v[AT.renewals] as number | null) ?? 0,
    renewedAt: (v[AT.renewed_at] as Date | null) ?? null,
  };
}

/** A row of the claim's answer (claim-queries.ts KNOWN_TO_CLAIMER), claimed by `workerId`. */
export function mapClaimedValues(v: unknown[], workerId: string): Job {
  v[AT.status] = 'processing';
  v[AT.claimed_by] = workerId;
  v[AT.updated_at] = new Date((v[AT.claimed_at] as Date).getTime());
  v[AT.renewals] = 0;
  return mapJobValues(v);
}

export function mapJob(row: JobRow): Job {
  return mapJobValues(JOB_COLUMNS.map((c) => row[c]));
}

export function mapWorker(row: WorkerRow): WorkerInfo {
  return {
    id: row.id,
    name: row.name,
    host: row.host,
    pid: row.pid,
    queues: row.queues,
    concurrency: row.concurrency,
    status: row.status,
    startedAt: row.started_at,
    lastSeenAt: row.last_seen_at,
    inFlight: row.in_flight,
    kind: row.kind,
  };
}
