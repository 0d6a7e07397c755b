import type { Job } from '../core/types.js';

/** A job of the tasks queue in the seed's shape. */
export function taskJson(job: Job) {
  return {
    id: job.id,
    task_data: job.payload,
    status: job.status,
    scheduled_at: job.availableAt.toISOString(),
    processor: job.claimedBy,
    token: job.generation,
    attempts: job.attempts,
    max_attempts: job.maxAttempts,
    started_at: job.claimedAt?.toISOString() ?? null,
    must_heartbeat_before:
      job.status === 'processing' ? (job.leaseExpiresAt?.toISOString() ?? null) : null,
    processed_at: job.status === 'completed' ? (job.finishedAt?.toISOString() ?? null) : null,
    task_output: job.result ?? null,
    last_error: job.lastError,
    created_at: job.createdAt.toISOString(),
  };
}
