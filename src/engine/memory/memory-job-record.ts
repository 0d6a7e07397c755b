/**
 * A job as the memory engine stores it (a mutable Job), and the record-level rules both the
 * queue operations and their answers rely on: liveness, lease end, claim order, the kept error
 * history, dedup keys, and the copies that keep stored state out of callers' hands.
 */
import type { Job, JobAttemptError } from '../../core/types.js';

export type JobRecord = { -readonly [K in keyof Job]: Job[K] };

/** Failed attempts kept on a job, newest last (core/types JobAttemptError). */
const ERRORS_KEPT = 20;

export function isLive(r: JobRecord): boolean {
  return r.status === 'pending' || r.status === 'processing';
}

/** Not finished yet: live, or a flow's parent waiting for its children (it holds its key). */
export function isUnfinished(r: JobRecord): boolean {
  return isLive(r) || r.status === 'waiting';
}

export function leaseEnd(r: JobRecord): number {
  return r.leaseExpiresAt?.getTime() ?? Number.NEGATIVE_INFINITY;
}

/** Priority descending, then available_at, then id: the claim order of every engine. */
export function claimOrder(a: JobRecord, b: JobRecord): number {
  return (
    b.priority - a.priority || a.availableAt.getTime() - b.availableAt.getTime() || a.id - b.id
  );
}

/** Appends a failed attempt; `claimed`: it names the failed claim (worker and token). */
export function recordError(r: JobRecord, error: string, now: Date, claimed = true): void {
  const entry: JobAttemptError = claimed
    ? {
        attempt: r.attempts,
        at: now,
        error,
        worker: r.claimedBy,
        token: r.generation,
        renewals: r.renewals,
      }
    : { attempt: r.attempts, at: now, error };
  r.errors = [...r.errors, entry].slice(-ERRORS_KEPT);
  r.lastError = error;
}

/** A collision-free composite key for (queue, key) and (queue, partitionKey). */
export function dedupKey(queue: string, key: string): string {
  return JSON.stringify([queue, key]);
}

/** What jsonb would store: undefined becomes null, Dates become strings, and so on. */
export function toJson(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}

/** Callers must not be able to mutate stored state through a returned job, nor vice versa. */
export function view(r: JobRecord): Job {
  return structuredClone(r);
}
