/**
 * Broken variant, for the chaos harness only: flow control counted in the worker instead of the
 * database (the design decision 0239 rejected). Configuring a queue stores its settings in a
 * table of the harness's instead of `queues`, so the claim statement never sees them and takes
 * the plain path; each process then holds itself to the limits on its own: at most
 * `concurrency` jobs of the queue in flight in this process (counted from its claims until
 * their outcome is sent or their lease expires), and at most `rate.limit` claims in any
 * `rate.per` of its clock. Each process keeps within the limits; several processes together
 * do not. (perKeyConcurrency is left to the plain claim, which keeps one job per key: stricter
 * than any cap, so the per-key limit cannot show this bug.)
 */
import type { Job, QueueSettings } from '../../../src/core/types.js';
import type {
  JobClaimParams,
  JobLeaseRef,
  JobRenewed,
  JobRenewParams,
} from '../../../src/engine/jobs.js';
import type { QueueOperations } from '../../../src/engine/queues.js';
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../../src/engine/postgres/postgres-engine.js';
import { quoteSchema } from '../../../src/engine/postgres/sql-identifiers.js';

/** How long a process trusts the limits it read (the harness configures once, before the run). */
const LIMITS_TTL_MS = 5_000;

/** The real operations this variant wraps (the engine's operations are instance properties). */
type Real = Pick<
  PostgresEngine,
  | 'jobClaimBatch'
  | 'jobRenewLeases'
  | 'jobComplete'
  | 'jobFail'
  | 'jobHandBack'
  | 'queueSettingsGet'
>;

export class WorkerSideLimitsEngine extends PostgresEngine {
  private readonly real: Real;

  private limits: { at: number; byQueue: Map<string, QueueSettings> } | undefined;
  /**
   * This process's jobs in flight: their queue and lease expiry. What its limits count, until
   * an outcome is sent or the lease expires (a job abandoned after its lease was lost).
   */
  private readonly inFlight = new Map<number, { queue: string; expiresAt: number }>();
  /** This process's claim instants per queue (its own clock), for the rate. */
  private readonly starts = new Map<string, number[]>();

  constructor(options: PostgresEngineOptions & { connectionString: string }) {
    super(options);
    // Captured before the overrides replace them.
    this.real = {
      jobClaimBatch: this.jobClaimBatch,
      jobRenewLeases: this.jobRenewLeases,
      jobComplete: this.jobComplete,
      jobFail: this.jobFail,
      jobHandBack: this.jobHandBack,
      queueSettingsGet: this.queueSettingsGet,
    };
    this.jobClaimBatch = (p) => this.claim(p);
    this.jobRenewLeases = (p) => this.renew(p);
    this.jobComplete = (p) => this.ending(p.jobs, () => this.real.jobComplete(p));
    this.jobFail = (p) => this.ending(p.jobs, () => this.real.jobFail(p));
    this.jobHandBack = (p) => this.ending(p.jobs, () => this.real.jobHandBack(p));
    this.queueConfigure = (p) => this.configure(p);
    this.queueSettingsGet = async ({ queue }) =>
      (await this.workerLimits()).get(queue) ?? this.real.queueSettingsGet({ queue });
  }

  private get table(): string {
    return `${quoteSchema(this.schema)}.chaos_worker_limits`;
  }

  private async configure({
    queue,
    change,
  }: Parameters<QueueOperations['queueConfigure']>[0]): Promise<QueueSettings> {
    const current = await this.queueSettingsGet({ queue });
    const settings: QueueSettings = { ...current, ...change, queue };
    await this.pool.query(
      `CREATE TABLE IF NOT EXISTS ${this.table} (queue text PRIMARY KEY, settings jsonb NOT NULL)`,
    );
    await this.pool.query(
      `INSERT INTO ${this.table} (queue, settings) VALUES ($1, $2)
       ON CONFLICT (queue) DO UPDATE SET settings = excluded.settings`,
      [queue, JSON.stringify(settings)],
    );
    return settings;
  }

  private async workerLimits(): Promise<Map<string, QueueSettings>> {
    if (this.limits && Date.now() - this.limits.at < LIMITS_TTL_MS) return this.limits.byQueue;
    const rows = await this.pool
      .query<{ queue: string; settings: QueueSettings }>(
        `SELECT queue, settings FROM ${this.table}`,
      )
      .then((r) => r.rows)
      .catch((error: { code?: string }) => {
        if (error.code === '42P01') return []; // nothing configured yet
        throw error;
      });
    this.limits = { at: Date.now(), byQueue: new Map(rows.map((r) => [r.queue, r.settings])) };
    return this.limits.byQueue;
  }

  /** How many jobs of `queue` this process may still start now, by its own count. */
  private room(queue: string, settings: QueueSettings | undefined): number {
    if (!settings) return Infinity;
    if (settings.paused) return 0;
    let room = Infinity;
    const now = Date.now();
    const held = [...this.inFlight.values()].filter(
      (j) => j.queue === queue && j.expiresAt > now,
    ).length;
    if (settings.concurrency !== null) room = Math.min(room, settings.concurrency - held);
    if (settings.rate) {
      const since = Date.now() - settings.rate.per;
      const recent = (this.starts.get(queue) ?? []).filter((t) => t > since);
      this.starts.set(queue, recent);
      room = Math.min(room, settings.rate.limit - recent.length);
    }
    return Math.max(0, room);
  }

  private async claim(p: JobClaimParams): Promise<Job[]> {
    const limits = await this.workerLimits();
    const claimed: Job[] = [];
    // Each limited queue claimed on its own, as many as this process's room allows.
    for (const queue of new Set(p.queues)) {
      const limit = Math.min(p.limit - claimed.length, this.room(queue, limits.get(queue)));
      if (limit <= 0) continue;
      const jobs = await this.real.jobClaimBatch({ ...p, queues: [queue], limit });
      const now = Date.now();
      for (const job of jobs) {
        this.inFlight.set(job.id, {
          queue: job.queue,
          expiresAt: job.leaseExpiresAt?.getTime() ?? now,
        });
        this.starts.set(queue, [...(this.starts.get(queue) ?? []), now]);
      }
      claimed.push(...jobs);
    }
    return claimed;
  }

  /** An outcome sent: whatever its answer, this process no longer counts the jobs. */
  private async ending<T>(jobs: readonly JobLeaseRef[], call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } finally {
      for (const j of jobs) this.inFlight.delete(j.id);
    }
  }

  /** A job the renewal did not return is lost to this process; the others' leases move on. */
  private async renew(p: JobRenewParams): Promise<JobRenewed[]> {
    const renewed = await this.real.jobRenewLeases(p);
    const kept = new Map(renewed.map((r) => [r.id, r.leaseExpiresAt.getTime()]));
    for (const j of p.jobs) {
      const expiresAt = kept.get(j.id);
      const held = this.inFlight.get(j.id);
      if (expiresAt === undefined) this.inFlight.delete(j.id);
      else if (held) held.expiresAt = expiresAt;
    }
    return renewed;
  }
}
