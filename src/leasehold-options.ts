/**
 * The options and event types of the front door (leasehold.ts): what `Leasehold.connect`,
 * `Leasehold.memory`, `lh.on` and `lh.instrument` take. The package exports them from index.ts.
 */
import type pg from 'pg';
import type { Clock } from './core/clock.js';
import type { Engine } from './engine/engine.js';
import type { EngineCallEvent } from './engine/instrumented-engine.js';
import type { ConnectionTimingOptions } from './engine/postgres/connection-timing.js';
import type { PoolMode } from './engine/postgres/postgres-engine.js';
import type { Election } from './locks/election.js';
import type { JobTracing } from './queue/job-tracing.js';
import type { Worker } from './queue/worker.js';
import type { RequestTracing } from './runtime/request-tracing.js';

/**
 * Timing (defaults in docs/architecture.md, "A silent database"): `connectTimeoutMs` (pool slot
 * or new connection, 10 s), `statementTimeoutMs` (server-side, 10 s), `queryTimeoutMs`
 * (client-side, statement + 2 s), `keepAliveIdleMs` (10 s); these shape the pool leasehold
 * creates. `lockProbeIntervalMs` (1 s) and `lockProbeTimeoutMs` (2 s): an advisory or session
 * lock's holder hears of a silent server within their sum.
 */
export interface ConnectOptions extends ConnectionTimingOptions {
  /** A PostgreSQL URL; or pass `pool` to share a pool you own. */
  connectionString?: string;
  pool?: pg.Pool;
  /** Schema for leasehold's tables (default `leasehold`). */
  schema?: string;
  /** Pool size when leasehold creates the pool (default 10). */
  poolSize?: number;
  /** Wait at most this long for a database connection before `unavailable` (default 10 s). */
  connectTimeoutMs?: number;
  /** The server's statement_timeout on leasehold's pool (default 10 s); `unavailable` after. */
  statementTimeoutMs?: number;
  /** The client's bound on a statement's answer (default statementTimeoutMs + 2 s). */
  queryTimeoutMs?: number;
  /** Apply pending migrations while connecting (default false: call `migrate()` yourself). */
  migrate?: boolean;
  /** `transaction` behind pgbouncer in transaction mode (see PostgresEngineOptions.poolMode). */
  poolMode?: PoolMode;
  /** Named prepared statements (default true; false under transaction pooling). */
  preparedStatements?: boolean;
}

/** A schedule as its newest claimed slot describes it (see `listSchedules`). */
export type ScheduleSummary = Awaited<ReturnType<Engine['scheduleList']>>[number];

/** What `lh.on(name, listener)` can listen to. */
export interface LeaseholdEvents {
  /** Every engine call, once it settled: operation, duration, outcome and error code. */
  engine: EngineCallEvent;
}

/**
 * What `lh.instrument()` installs: the hooks tracing builds on (decision 0260), beside the
 * engine's call events (`lh.on('engine')`). `leasehold/opentelemetry` is one such set; none of
 * these types names OpenTelemetry.
 */
export interface LeaseholdInstrumentation {
  /** Wraps every enqueue of this Leasehold's queues and every handler run of its workers. */
  readonly jobs?: JobTracing;
  /** Traces the HTTP service's requests when the service is built on this Leasehold. */
  readonly requests?: RequestTracing;
  /** Told of every worker and election of this Leasehold, those created so far and later ones. */
  service?(service: Worker | Election): void;
}

export interface MemoryOptions {
  /** Give a ManualClock to control time (see `leasehold/testing`). */
  clock?: Clock;
}
