/** Domain objects to JSON answers: dates as ISO strings, nothing internal leaked. */
import type { Job, JobExplanation, JobStep, Lease, QueueSettings } from '../core/types.js';
import type { QueueOverview } from '../queue/job-manager.js';

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
    errors: job.errors.map((e) => ({
      attempt: e.attempt,
      at: e.at.toISOString(),
      error: e.error,
      ...(e.worker === undefined ? {} : { worker: e.worker }),
      ...(e.token === undefined ? {} : { token: e.token }),
      ...(e.renewals === undefined ? {} : { renewals: e.renewals }),
    })),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
    timeoutMs: job.timeoutMs,
    progress: job.progress,
    parentId: job.parentId,
    renewals: job.renewals,
    renewedAt: job.renewedAt?.toISOString() ?? null,
  };
}

/** A job with its recorded steps (GET /api/jobs/:id). */
export function jobDetailJson(job: Job, steps: readonly JobStep[]) {
  return {
    ...jobJson(job),
    steps: steps.map((s) => ({
      name: s.name,
      value: s.value,
      generation: s.generation,
      recordedAt: s.recordedAt.toISOString(),
    })),
  };
}

export type QueueSettingsJson = ReturnType<typeof queueSettingsJson>;

/** A queue's flow control; `rate.per` in milliseconds. */
export function queueSettingsJson(settings: QueueSettings) {
  return {
    queue: settings.queue,
    paused: settings.paused,
    concurrency: settings.concurrency,
    perKeyConcurrency: settings.perKeyConcurrency,
    rate: settings.rate ? { limit: settings.rate.limit, per: settings.rate.per } : null,
    fairness: settings.fairness,
  };
}

export function queueOverviewJson(queue: QueueOverview) {
  return { ...queueSettingsJson(queue), counts: { ...queue.counts } };
}

/** Why a job waits: `until` and `nextSlotAt` as ISO strings, everything else as it is. */
export function explanationJson(explanation: JobExplanation) {
  switch (explanation.reason) {
    case 'scheduled':
    case 'backoff':
      return { reason: explanation.reason, until: explanation.until.toISOString() };
    case 'rate':
      return {
        reason: explanation.reason,
        nextSlotAt: explanation.nextSlotAt.toISOString(),
        limit: explanation.limit,
        per: explanation.per,
      };
    default:
      return { ...explanation };
  }
}
