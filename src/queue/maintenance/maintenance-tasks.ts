/**
 * The housekeeping every queue needs, each task one bounded step so a cycle never holds a long
 * transaction (seed 001): rescue jobs whose lease expired, mark silent workers dead, prune
 * finished jobs past their retention. Each returns how much it did; the maintainer repeats a
 * task while it keeps filling its batch, up to a per-cycle cap.
 */
import type { BackoffPolicy } from '../../core/backoff.js';
import type { Engine } from '../../engine/engine.js';

export interface MaintenanceSettings {
  /** Rows per statement. */
  batchSize: number;
  /** Backoff of a rescued job before it may run again. */
  rescueBackoff: BackoffPolicy;
  /** A worker silent this long is dead. */
  workerSilenceMs: number;
  /** Completed, dead and cancelled jobs are deleted this long after they finished. */
  retentionMs: number;
  /** Recorded lease and election terms are deleted this long after they ended (decision 0267). */
  termRetentionMs: number;
  /** And beyond this many per resource, the oldest first. */
  termsPerResource: number;
}

export interface MaintenanceTask {
  readonly name: 'rescue' | 'sweep-workers' | 'prune' | 'prune-terms';
  /** One bounded step; returns the rows it changed. */
  step(engine: Engine, settings: MaintenanceSettings): Promise<number>;
}

export const rescueExpiredJobs: MaintenanceTask = {
  name: 'rescue',
  async step(engine, s) {
    const r = await engine.jobRescueExpired({ limit: s.batchSize, backoff: s.rescueBackoff });
    return r.rescued + r.deadLettered;
  },
};

export const sweepSilentWorkers: MaintenanceTask = {
  name: 'sweep-workers',
  step: (engine, s) =>
    engine.workerMarkDead({ silentForMs: s.workerSilenceMs, limit: s.batchSize }),
};

export const pruneFinishedJobs: MaintenanceTask = {
  name: 'prune',
  step: (engine, s) => engine.jobPrune({ olderThanMs: s.retentionMs, limit: s.batchSize }),
};

export const pruneLeaseTerms: MaintenanceTask = {
  name: 'prune-terms',
  step: (engine, s) =>
    engine.leaseTermPrune({
      olderThanMs: s.termRetentionMs,
      keepPerResource: s.termsPerResource,
      limit: s.batchSize,
    }),
};
