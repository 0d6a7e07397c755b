/**
 * Row mapping of the job and worker families: jobs and workers rows as pg returns them
 * (bigint columns arrive as strings, jsonb already parsed) to the domain types of core/types.
 */
import type {
  Job,
  JobAttemptError,
  JobStatus,
  WorkerInfo,
  WorkerStatus,
} from '../../core/types.js';
import { toSafeInteger } from './rows.js';

/** A jobs row as the job queries select it (job-queries.ts, jobColumns). */
export interface JobRow {
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
  errors: { attempt: number; at: string; error: string }[];
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
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
}

export function mapJob(row: JobRow): Job {
  return {
    id: toSafeInteger(row.id, 'jobs.id'),
    queue: row.queue,
    type: row.type,
    key: row.key,
    // SQL NULL and jsonb null both mean a null payload or result.
    payload: row.payload ?? null,
    headers: row.headers,
    partitionKey: row.partition_key,
    priority: row.priority,
    status: row.status,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    availableAt: row.available_at,
    claimedBy: row.claimed_by,
    claimedAt: row.claimed_at,
    leaseExpiresAt: row.lease_expires_at,
    generation: toSafeInteger(row.generation, 'jobs.generation'),
    result: row.result ?? null,
    lastError: row.last_error,
    errors: row.errors.map((e): JobAttemptError => ({
      attempt: e.attempt,
      at: new Date(e.at),
      error: e.error,
    })),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
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
  };
}
