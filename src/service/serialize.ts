/** Domain objects to JSON answers: dates as ISO strings, nothing internal leaked. */
import type { Job, Lease } from '../core/types.js';

export type LeaseJson = ReturnType<typeof leaseJson>;

export function leaseJson(lease: Lease) {
  return {
    id: lease.id,
    resource: lease.resource,
    holder: lease.holder,
    token: lease.token,
    metadata: lease.metadata as Record<string, unknown> | null,
    state: lease.state,
    createdAt: lease.createdAt.toISOString(),
    acquiredAt: lease.acquiredAt.toISOString(),
    renewedAt: lease.renewedAt?.toISOString() ?? null,
    releasedAt: lease.releasedAt?.toISOString() ?? null,
    expiresAt: lease.expiresAt.toISOString(),
    renewCount: lease.renewCount,
    ttlMs: lease.ttlMs,
  };
}

export function jobJson(job: Job) {
  return {
    id: job.id,
    queue: job.queue,
    type: job.type,
    key: job.key,
    payload: job.payload,
    headers: { ...job.headers },
    partitionKey: job.partitionKey,
    priority: job.priority,
    status: job.status,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    availableAt: job.availableAt.toISOString(),
    claimedBy: job.claimedBy,
    claimedAt: job.claimedAt?.toISOString() ?? null,
    leaseExpiresAt: job.leaseExpiresAt?.toISOString() ?? null,
    generation: job.generation,
    result: job.result ?? null,
    lastError: job.lastError,
    errors: job.errors.map((e) => ({ attempt: e.attempt, at: e.at.toISOString(), error: e.error })),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
    timeoutMs: job.timeoutMs,
  };
}
