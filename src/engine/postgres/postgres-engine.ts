/**
 * PostgresEngine: the Engine seam on PostgreSQL. It owns the pool (unless given one) and
 * composes one module per family over a shared PgContext (compose.ts makes them its methods),
 * so each family's SQL and row mapping stay in their own files.
 */
import pg from 'pg';
import { createHash } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { InvalidArgumentError, UnsupportedError } from '../../core/errors.js';
import { ComposedEngine, refusingFamily } from '../compose.js';
import type { Engine, EngineCapabilities, MigrationReport } from '../engine.js';
import type { EngineFamilies } from '../families.js';
import {
  resolveConnectionTiming,
  type ConnectionTiming,
  type ConnectionTimingOptions,
} from './connection-timing.js';
import { PgContext } from './context.js';
import { Migrator } from './migrator.js';
import { PostgresControls } from './postgres-controls.js';
import { PostgresQueues } from './postgres-queues.js';
import { PostgresJobs } from './postgres-jobs.js';
import { PostgresJobAdmin } from './postgres-job-admin.js';
import { PostgresLeases } from './postgres-leases.js';
import { lockQueries, type LockQueries } from './lock-queries.js';
import { PostgresConnectionLocks } from './postgres-connection-locks.js';
import { PostgresFences } from './postgres-fences.js';
import { PostgresTrends } from './postgres-trends.js';
import { PostgresFlows } from './postgres-flows.js';
import { PostgresLeaseLocks } from './postgres-lease-locks.js';
import { PostgresScheduleSlots } from './postgres-schedule-slots.js';
import { PostgresSemaphores } from './postgres-semaphores.js';
import { PostgresSteps } from './postgres-steps.js';
import { PostgresNotifier } from './postgres-notifier.js';
import { PostgresWorkers } from './postgres-workers.js';
import { quoteSchema } from './sql-identifiers.js';

/**
 * Timing (connection-timing.ts): `connectTimeoutMs`, `statementTimeoutMs`, `queryTimeoutMs` and
 * `keepAliveIdleMs` configure the pool we create (ignored with `pool`: configure yours);
 * `lockProbeIntervalMs` and `lockProbeTimeoutMs` apply to advisory and session locks either way.
 */
export interface PostgresEngineOptions extends ConnectionTimingOptions {
  /** Either a pool the caller owns (not closed by us) or a connection string (we own the pool). */
  pool?: pg.Pool;
  connectionString?: string;
  /** Schema holding leasehold's tables; a lower-case identifier. Default `leasehold`. */
  schema?: string;
  /** Size of the pool we create; ignored with `pool`. Default 10. */
  poolSize?: number;
  /**
   * How long to wait for a connection (a new one, or a free pool slot) before failing with
   * `unavailable`; ignored with `pool`. Default 10 s. A service answering HTTP wants it short,
   * so an outage turns into a quick 503 instead of a hanging request.
   */
  connectTimeoutMs?: number;
  /**
   * The server's `statement_timeout` on our pool's connections (default 10 s); a statement it
   * cancels fails with `unavailable`. Migrations run without it.
   */
  statementTimeoutMs?: number;
  /**
   * Pins the database's `now` to this clock's wall time: every time-sensitive statement then
   * reads `coalesce($now, now())` with `$now` from the clock. Production leaves it unset, so the
   * database clock decides; the conformance suite uses it to run both engines on one timeline.
   * Its timers always schedule the engine's users (renewals, polling), pinned or not.
   */
  clock?: Clock;
  /** Named prepared statements (default true; false with poolMode 'transaction'). */
  preparedStatements?: boolean;
  /**
   * How connections reach PostgreSQL. `session` (default): directly, or through a pooler in
   * session mode; every feature works. `transaction`: through pgbouncer in transaction mode,
   * where a server connection is ours only for one transaction: no LISTEN (workers and waits
   * poll), no advisory or session locks (they refuse with `unsupported`), no named prepared
   * statements. Leases, lease locks, elections, schedules, fences and the queue work as usual.
   */
  poolMode?: PoolMode;
}

export type PoolMode = 'session' | 'transaction';

/**
 * Session settings of each new pooled connection, set before the pool hands it out. Not as
 * startup parameters, which pgbouncer refuses; not under transaction pooling, where a session
 * setting would land on whichever server connection pgbouncer picked (set them on the role
 * there; the client-side bound holds either way).
 *
 * - `statement_timeout`: the server-side bound.
 * - `jit = off`: every statement of ours touches a few rows, but the claim's generic plan is
 *   estimated above `jit_above_cost` (its lateral scans are costed for whole queues), so where
 *   PostgreSQL is built with LLVM (Debian's is) each claim compiled its expressions first:
 *   1.36 s of a 1.41 s claim, measured on the failover cluster, where claims of the limited
 *   queues took the server's two cores and the fleet fell behind for good.
 */
function sessionSettings(
  poolMode: PoolMode | undefined,
  timing: ConnectionTiming,
): Pick<pg.PoolConfig, 'onConnect'> {
  if (poolMode === 'transaction') return {};
  const values = [`${timing.statementTimeoutMs}ms`];
  return {
    onConnect: async (client) =>
      void (await client.query(
        "SELECT set_config('statement_timeout', $1, false), set_config('jit', 'off', false)",
        values,
      )),
  };
}

/**
 * A connection the server ends (pg_terminate_backend, a restart, a failover) makes its client
 * emit 'error', and an 'error' event nobody listens to kills the process. The pool listens only
 * while a client is idle: an idle client's error is re-emitted on the pool, and one checked out
 * is the borrower's to handle. But pg-pool takes its listener off a client before the borrower
 * can put one on: a `pool.connect()` promise resolves a microtask later, while the rest of the
 * socket read that freed the client (the previous query's last message, then the server's
 * FATAL 57P01 in the same chunk) is parsed at once. So every client of our pool gets a listener
 * of its own for life. Swallowing loses nothing: the client is marked unusable, its pending and
 * later queries fail with the error (which is how callers learn of it), and the pool drops it
 * when it is released.
 */
function guardLostConnections(pool: pg.Pool): void {
  const ignore = (): void => {};
  pool.on('error', ignore); // an idle client's error, re-emitted by the pool
  pool.on('connect', (client) => void client.on('error', ignore));
}

const CAPABILITIES: EngineCapabilities = {
  crossProcess: true,
  advisoryLocks: true,
  sessionLocks: true,
  notifications: true,
  callerTransactions: true,
};

/** What survives a pooler that hands out server connections per transaction. */
const TRANSACTION_POOLING_CAPABILITIES: EngineCapabilities = {
  ...CAPABILITIES,
  advisoryLocks: false,
  sessionLocks: false,
  notifications: false,
};

export class PostgresEngine extends ComposedEngine implements Engine {
  readonly name = 'postgres';
  readonly capabilities: EngineCapabilities;
  readonly poolMode: PoolMode;
  readonly clock: Clock;
  readonly schema: string;
  readonly pool: pg.Pool;

  private readonly ctx: PgContext;
  private readonly ownsPool: boolean;
  private readonly notifier: PostgresNotifier;
  private readonly jobs: PostgresJobs;
  private readonly connectionLocks: PostgresConnectionLocks;

  constructor(options: PostgresEngineOptions) {
    const schema = options.schema ?? 'leasehold';
    const quotedSchema = quoteSchema(schema);
    const timing = resolveConnectionTiming(options);
    let pool: pg.Pool;
    let clientConfig: pg.ClientConfig;
    if (options.pool) {
      pool = options.pool;
      // pg keeps the pool's connection settings here; the listener and session locks need
      // connections of their own with the same settings.
      clientConfig = (options.pool as unknown as { options: pg.ClientConfig }).options;
    } else if (options.connectionString) {
      // What every connection of ours shares (pool, listener, lock connections): a bounded
      // connect and a short keepalive, so a peer that vanished is noticed in seconds.
      clientConfig = {
        connectionString: options.connectionString,
        connectionTimeoutMillis: timing.connectTimeoutMs,
        keepAlive: true,
        keepAliveInitialDelayMillis: timing.keepAliveIdleMs,
      };
      pool = new pg.Pool({
        ...clientConfig,
        max: options.poolSize ?? 10,
        // Every pooled statement is bounded by the client, for a server that stopped answering
        // (the client then drops the connection), and by the server (sessionSettings).
        query_timeout: timing.queryTimeoutMs,
        ...sessionSettings(options.poolMode, timing),
        application_name: 'leasehold',
      });
    } else {
      throw new InvalidArgumentError('connectionString', 'give a connectionString or a pool');
    }
    const ownsPool = !options.pool;
    if (ownsPool) guardLostConnections(pool);
    const clock = options.clock ?? systemClock;
    const poolMode = options.poolMode ?? 'session';
    if (poolMode !== 'session' && poolMode !== 'transaction')
      throw new InvalidArgumentError('poolMode', `must be "session" or "transaction"`);
    // Statement names must differ per schema: one connection may serve engines on two schemas.
    const statementPrefix =
      options.preparedStatements === false ||
      (poolMode === 'transaction' && options.preparedStatements !== true)
        ? undefined
        : `lh_${createHash('sha1').update(schema).digest('hex').slice(0, 8)}_`;
    const ctx = new PgContext(
      pool,
      schema,
      quotedSchema,
      options.clock,
      statementPrefix,
      clientConfig,
      timing,
    );
    const notifier = new PostgresNotifier(ctx, clientConfig, clock);
    const jobs = new PostgresJobs(ctx);
    const sql = lockQueries(quotedSchema);
    const connectionLocks = new PostgresConnectionLocks(ctx, sql);
    const steps = new PostgresSteps(ctx);
    super(families(poolMode, ctx, sql, { notifier, jobs, connectionLocks, steps }));
    this.schema = schema;
    this.pool = pool;
    this.ownsPool = ownsPool;
    this.clock = clock;
    this.poolMode = poolMode;
    this.capabilities =
      poolMode === 'transaction' ? TRANSACTION_POOLING_CAPABILITIES : CAPABILITIES;
    this.ctx = ctx;
    this.notifier = notifier;
    this.jobs = jobs;
    this.connectionLocks = connectionLocks;
    // Last, so an override may read the engine's fields (not its own: they are set after this).
    steps.useRecordStatement(this.stepRecordStatement(steps.defaultRecordStatement, quotedSchema));
  }

  /**
   * The statement that records a step (step-queries.ts, JobStepRecord): an INSERT guarded by
   * the job's ownership, which holds the job row FOR SHARE until the step commits. Given the
   * default, answers the text to use; overridable only so the chaos harness can prove what the
   * guard is for (a broken variant records without it). Same parameters: $1 job id,
   * $2 generation, $3 worker id, $4 name, $5 value jsonb, $6 now; answers `recorded_at`.
   * Called once, at the end of the constructor.
   */
  protected stepRecordStatement(guarded: string, _quotedSchema: string): string {
    return guarded;
  }

  async migrate(): Promise<MigrationReport> {
    this.ctx.assertOpen();
    return new Migrator(this.pool, this.schema, this.ctx.quotedSchema).migrate();
  }

  async now(): Promise<Date> {
    const rows = await this.ctx.query<{ now: Date }>(
      'EngineNow',
      'SELECT coalesce($1::timestamptz, now()) AS now',
      [this.ctx.pinnedNow()],
    );
    return rows[0]!.now;
  }

  async close(): Promise<void> {
    if (this.ctx.isClosed) return;
    await this.jobs.flushNotifications();
    this.ctx.markClosed();
    await this.notifier.close();
    this.connectionLocks.close(); // dedicated lock connections: their holders' signals fire
    if (this.ownsPool) await this.pool.end();
  }
}

/**
 * One module per family over the shared context. Under transaction pooling a feature that needs
 * a server session of its own (LISTEN, advisory and session locks) is refused: pgbouncer gives
 * a server connection for one transaction only.
 */
function families(
  poolMode: PoolMode,
  ctx: PgContext,
  sql: LockQueries,
  shared: {
    notifier: PostgresNotifier;
    jobs: PostgresJobs;
    connectionLocks: PostgresConnectionLocks;
    steps: PostgresSteps;
  },
): EngineFamilies {
  const { notifier, jobs, connectionLocks, steps } = shared;
  const pooled = poolMode === 'transaction';
  return {
    leases: new PostgresLeases(ctx),
    connectionLocks: pooled
      ? refusingFamily('connectionLocks', (operation) =>
          sessionBound(operation.startsWith('advisory') ? 'advisory locks' : 'session locks'),
        )
      : connectionLocks,
    leaseLocks: new PostgresLeaseLocks(ctx, sql),
    semaphores: new PostgresSemaphores(ctx),
    scheduleSlots: new PostgresScheduleSlots(ctx, sql),
    fences: new PostgresFences(ctx, sql),
    jobs,
    jobAdmin: new PostgresJobAdmin(ctx),
    workers: new PostgresWorkers(ctx),
    notifications: pooled
      ? {
          notifyListen: () => Promise.reject(sessionBound('LISTEN')),
          notifySend: (p) => notifier.notifySend(p),
        }
      : notifier,
    controls: new PostgresControls(ctx),
    queues: new PostgresQueues(ctx),
    steps,
    flows: new PostgresFlows(ctx),
    trends: new PostgresTrends(ctx),
  };
}

function sessionBound(feature: string): UnsupportedError {
  return new UnsupportedError(
    `${feature} need a server session of their own, which pgbouncer in transaction mode does not give (poolMode 'transaction'); use lease locks, or connect directly or through session pooling`,
  );
}
