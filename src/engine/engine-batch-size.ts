/**
 * What both metrics sources (Prometheus, decision 0258; OpenTelemetry, decision 0260) read from
 * an engine call: how many items it carried, for the operations that carry a batch (the
 * coalescers' and the worker's batched writes, and claims by what they took), reported as the
 * batch size; and a claim's jobs per queue.
 */
import type { EngineCallEvent } from './instrumented-engine.js';

const BATCH_SIZE: Partial<Record<EngineCallEvent['operation'], (call: EngineCallEvent) => number>> =
  {
    jobEnqueue: (c) => (c.operation === 'jobEnqueue' ? c.params.jobs.length : 0),
    jobComplete: (c) => (c.operation === 'jobComplete' ? c.params.jobs.length : 0),
    jobFail: (c) => (c.operation === 'jobFail' ? c.params.jobs.length : 0),
    jobRenewLeases: (c) => (c.operation === 'jobRenewLeases' ? c.params.jobs.length : 0),
    jobClaimBatch: (c) => (c.operation === 'jobClaimBatch' ? (c.result?.length ?? 0) : 0),
    leaseAcquireMany: (c) => (c.operation === 'leaseAcquireMany' ? c.params.length : 0),
    leaseRenewMany: (c) => (c.operation === 'leaseRenewMany' ? c.params.length : 0),
    leaseReleaseMany: (c) => (c.operation === 'leaseReleaseMany' ? c.params.length : 0),
  };

/** The call's batch size, or undefined for an operation that carries no batch. */
export function engineBatchSize(call: EngineCallEvent): number | undefined {
  return BATCH_SIZE[call.operation]?.(call);
}

/** A claim's jobs counted per queue (usually one queue: no map then), for one count each. */
export function claimedByQueue(jobs: readonly { queue: string }[]): Iterable<[string, number]> {
  if (jobs.length === 0) return [];
  const first = jobs[0]!.queue;
  if (jobs.every((job) => job.queue === first)) return [[first, jobs.length]];
  const byQueue = new Map<string, number>();
  for (const job of jobs) byQueue.set(job.queue, (byQueue.get(job.queue) ?? 0) + 1);
  return byQueue;
}
