/**
 * Runs the queue's housekeeping on one instance per cycle. Every instance may run a
 * Maintainer; each cycle, whoever gets the `maintenance` advisory lock (non-blocking) does the
 * work and the others skip, so a fleet does it once without an elected leader to keep alive,
 * and a crashed runner's lock vanishes with its connection (seed 001).
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_BACKOFF, type BackoffPolicy } from '../../core/backoff.js';
import { toMilliseconds, type Duration } from '../../core/duration.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { optionalBoolean, requireSafeInteger } from '../../core/validate.js';
import type { Engine } from '../../engine/engine.js';
import { TypedEvents } from '../../runtime/events.js';
import { BackgroundService, type ServiceOptions } from '../../runtime/service.js';
import {
  pruneFinishedJobs,
  pruneTrends,
  recordTrends,
  pruneLeaseTerms,
  rescueExpiredJobs,
  sweepSilentWorkers,
  type MaintenanceSettings,
  type MaintenanceTask,
} from './maintenance-tasks.js';

export const MAINTENANCE_LOCK = 'leasehold:maintenance';

export interface MaintainerOptions extends Omit<ServiceOptions, 'intervalMs'> {
  /** Time between cycles; default 5 s. */
  interval?: Duration;
  batchSize?: number;
  /** Steps per task per cycle at most, so one cycle stays short; default 10. */
  maxStepsPerTask?: number;
  rescueBackoff?: BackoffPolicy;
  /** Default 30 s. */
  workerSilence?: Duration;
  /** Default 7 days. */
  retention?: Duration;
  /**
   * Record the queues' per-minute trends each cycle (decision 0265); default true. Off, the
   * table is neither written nor pruned by this maintainer.
   */
  trends?: boolean;
  /** How long trend rows are kept; default 1 day (the console's longest window). */
  trendsRetention?: Duration;
  /** Minutes a trends record may reach back after a gap; default 60, at most 1440. */
  trendsCatchUpMinutes?: number;
  /** How long recorded lease and election terms are kept after they ended; default 7 days. */
  termRetention?: Duration;
  /** Recorded terms kept per resource (the newest); default 100. */
  termsPerResource?: number;
}

export interface MaintenanceCycle {
  /** False when another instance held the maintenance lock this cycle. */
  readonly ran: boolean;
  readonly rescue: number;
  readonly 'sweep-workers': number;
  readonly prune: number;
  /** Trend rows written (the minute under way, and any missed since the newest recorded). */
  readonly trends: number;
  readonly 'prune-trends': number;
  readonly 'prune-terms': number;
}

export interface MaintainerEvents {
  'maintenance:ran': MaintenanceCycle;
  [name: string]: unknown;
}

export class Maintainer extends BackgroundService<MaintenanceCycle> {
  readonly events = new TypedEvents<MaintainerEvents>();
  private readonly settings: MaintenanceSettings;
  private readonly maxSteps: number;
  private readonly trends: boolean;
  private readonly instanceId = `maintainer-${randomBytes(6).toString('hex')}`;

  constructor(
    private readonly engine: Engine,
    options: MaintainerOptions = {},
  ) {
    super('maintainer', {
      ...options,
      intervalMs: toMilliseconds('interval', options.interval ?? 5_000, { min: 10 }),
    });
    this.settings = {
      batchSize: options.batchSize ?? 500,
      rescueBackoff: options.rescueBackoff ?? DEFAULT_BACKOFF,
      workerSilenceMs: toMilliseconds('workerSilence', options.workerSilence ?? 30_000),
      retentionMs: toMilliseconds('retention', options.retention ?? 7 * 24 * 3600 * 1000),
      trendsRetentionMs: toMilliseconds(
        'trendsRetention',
        options.trendsRetention ?? 24 * 3600 * 1000,
        { min: 60_000 },
      ),
      trendsCatchUpMinutes: requireSafeInteger(
        'trendsCatchUpMinutes',
        options.trendsCatchUpMinutes ?? 60,
        1,
      ),
      termRetentionMs: toMilliseconds(
        'termRetention',
        options.termRetention ?? 7 * 24 * 3600 * 1000,
      ),
      termsPerResource: requireSafeInteger('termsPerResource', options.termsPerResource ?? 100, 1),
    };
    if (this.settings.trendsCatchUpMinutes > 1440)
      throw new InvalidArgumentError('trendsCatchUpMinutes', 'must be at most 1440 (a day)');
    this.trends = optionalBoolean('trends', options.trends, true);
    this.maxSteps = options.maxStepsPerTask ?? 10;
  }

  async runOnce(): Promise<MaintenanceCycle> {
    const lock = await this.tryLock();
    if (!lock) {
      const skipped = {
        ran: false,
        rescue: 0,
        'sweep-workers': 0,
        prune: 0,
        trends: 0,
        'prune-trends': 0,
        'prune-terms': 0,
      };
      this.events.emit('maintenance:ran', skipped);
      return skipped;
    }
    try {
      const cycle = {
        ran: true,
        rescue: await this.runTask(rescueExpiredJobs, lock.signal),
        'sweep-workers': await this.runTask(sweepSilentWorkers, lock.signal),
        prune: await this.runTask(pruneFinishedJobs, lock.signal),
        trends: this.trends ? await this.runTask(recordTrends, lock.signal) : 0,
        'prune-trends': this.trends ? await this.runTask(pruneTrends, lock.signal) : 0,
        'prune-terms': await this.runTask(pruneLeaseTerms, lock.signal),
      };
      this.events.emit('maintenance:ran', cycle);
      return cycle;
    } finally {
      await lock.release();
    }
  }

  /**
   * The cycle's lock: an advisory lock on a dedicated connection (gone with a crashed runner's
   * connection), or, where the engine has none (pgbouncer transaction pooling), a lease lock
   * whose ttl bounds how long a crashed runner can hold the cycle up.
   */
  private async tryLock(): Promise<{ signal: AbortSignal; release(): Promise<unknown> } | null> {
    if (this.engine.capabilities.advisoryLocks)
      return this.engine.advisoryTryLock({ name: MAINTENANCE_LOCK });
    const holder = this.instanceId;
    const taken = await this.engine.leaseLockAcquire({
      name: MAINTENANCE_LOCK,
      holder,
      ttlMs: Math.max(30_000, this.intervalMs * 3),
    });
    if (!taken.acquired) return null;
    const { token } = taken.lease;
    return {
      signal: new AbortController().signal,
      release: () => this.engine.leaseLockRelease({ name: MAINTENANCE_LOCK, holder, token }),
    };
  }

  /** Repeats a bounded step while it fills its batch; stops if the lock is lost. */
  private async runTask(task: MaintenanceTask, lockSignal: AbortSignal): Promise<number> {
    let total = 0;
    for (let step = 0; step < this.maxSteps; step++) {
      if (lockSignal.aborted || this.stopSignal.aborted) break;
      const changed = await task.step(this.engine, this.settings);
      total += changed;
      if (task.once || changed < this.settings.batchSize) break;
    }
    return total;
  }
}
