/**
 * The housekeeping every queue needs, each task one bounded step so a cycle never holds a long
 * transaction (seed 001): rescue jobs whose lease expired, mark silent workers dead, prune
 * finished jobs past their retention, record the queues' per-minute trends and prune old ones.
 * Each returns how much it did; the maintainer repeats a task while it keeps filling its batch,
 * up to a per-cycle cap (a task marked `once` is one statement whatever it returns).
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
  /** Trend rows (per minute and queue) are deleted this long after their minute. */
  trendsRetentionMs: number;
  /** How many minutes back a trends record may reach after a gap (a leader change, a stop). */
  trendsCatchUpMinutes: number;
  /** Recorded lease and election terms are deleted this long after they ended (decision 0267). */
  termRetentionMs: number;
  /** And beyond this many per resource, the oldest first. */
  termsPerResource: number;
}

export interface MaintenanceTask {
  readonly name: 'rescue' | 'sweep-workers' | 'prune' | 'trends' | 'prune-trends' | 'prune-terms';
  /** One statement per cycle, never repeated (its answer is not a batch's fill). */
  readonly once?: boolean;
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

/**
 * The queues' figures of every minute due, from the jobs in the database (decision 0265): the
 * minute under way is rewritten each cycle, so charts move within a cycle, and minutes missed
 * while no maintainer ran are caught up, at most `trendsCatchUpMinutes` of them.
 */
export const recordTrends: MaintenanceTask = {
  name: 'trends',
  once: true,
  step: async (engine, s) =>
    (await engine.trendsRecord({ maxMinutes: s.trendsCatchUpMinutes })).rows,
};

export const pruneTrends: MaintenanceTask = {
  name: 'prune-trends',
  step: (engine, s) => engine.trendsPrune({ olderThanMs: s.trendsRetentionMs, limit: s.batchSize }),
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
