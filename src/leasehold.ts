import type pg from 'pg';
import type { Clock } from './core/clock.js';
import type { Engine, MigrationReport } from './engine/engine.js';
import { MemoryEngine } from './engine/memory/memory-engine.js';
import { PostgresEngine } from './engine/postgres/postgres-engine.js';
import { LeaseManager } from './leases/lease-manager.js';

export interface ConnectOptions {
  /** A PostgreSQL URL; or pass `pool` to share a pool you own. */
  connectionString?: string;
  pool?: pg.Pool;
  /** Schema for leasehold's tables (default `leasehold`). */
  schema?: string;
  /** Pool size when leasehold creates the pool (default 10). */
  poolSize?: number;
  /** Wait at most this long for a database connection before `unavailable` (default 10 s). */
  connectTimeoutMs?: number;
  /** Apply pending migrations while connecting (default false: call `migrate()` yourself). */
  migrate?: boolean;
}

export interface MemoryOptions {
  /** Give a ManualClock to control time (see `leasehold/testing`). */
  clock?: Clock;
}

/**
 * The front door. One Leasehold per process and database is the intended use: it owns the
 * engine (and its pool, unless you passed one) and every manager built on it.
 *
 * ```ts
 * const lh = await Leasehold.connect({ connectionString: process.env.DATABASE_URL, migrate: true });
 * await lh.leases.withLease('nightly-report', { holder: 'web-1', ttl: '30s' }, async ({ token, signal }) => {
 *   await buildReport({ token, signal });
 * });
 * await lh.close();
 * ```
 */
export class Leasehold {
  readonly leases: LeaseManager;
  // --- locks, elections, schedules, fences: added by the locks work ---
  // --- queue and workers: added by the queue work ---

  private constructor(readonly engine: Engine) {
    this.leases = new LeaseManager(engine);
  }

  static async connect(options: ConnectOptions): Promise<Leasehold> {
    const engine = new PostgresEngine(options);
    const lh = new Leasehold(engine);
    if (options.migrate) await lh.migrate();
    return lh;
  }

  static memory(options: MemoryOptions = {}): Leasehold {
    return new Leasehold(new MemoryEngine(options));
  }

  /** Builds on an engine you constructed yourself (e.g. wrapped for instrumentation). */
  static fromEngine(engine: Engine): Leasehold {
    return new Leasehold(engine);
  }

  /** Creates or upgrades leasehold's tables; safe when many instances start at once. */
  migrate(): Promise<MigrationReport> {
    return this.engine.migrate();
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}
