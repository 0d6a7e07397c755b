/**
 * A dedicated connection for one connection-bound lock (advisory or session). It is never
 * taken from the pool: a pooled client holding a lock would pin a pool slot for as long as the
 * lock is held, and a client returned to the pool with the lock still on it would hand the
 * lock to whoever borrows it next.
 *
 * States: open -> closed. A connection that errors, ends, or stops answering while open calls
 * `onLost` once with the reason; `close()` (our own doing) never does.
 *
 * Liveness (connection-timing.ts): once the lock is held, `watch()` probes the connection every
 * `lockProbeIntervalMs`; the lock is trusted until `lockProbeIntervalMs + lockProbeTimeoutMs`
 * after the last answered probe was sent, and lost when that passes (a silent server neither
 * errors nor closes the socket). A probe that finds another backend or a server started at
 * another time (a restart or failover behind a proxy) also means the lock is gone. The session
 * asks the server to give up on this client only after twice that bound (server-side TCP
 * keepalive), so the holder is told before the server could free the lock for someone else.
 * Statements other than a lock wait are bounded by `queryTimeoutMs`; a wait has no bound of its
 * own (the caller's timeout or signal cancels it).
 */
import pg from 'pg';
import { UnavailableError } from '../../core/errors.js';
import { lockLossBoundMs, lockSessionKeepalive } from './connection-timing.js';
import { destroyConnection, type PgContext } from './context.js';
import { mapPgError } from './pg-errors.js';

/** Who answers on this connection: a different answer later means the lock did not survive. */
interface ServerIdentity {
  readonly pid: number;
  /** pg_postmaster_start_time(), as text: moves on every restart, differs on another server. */
  readonly startedAt: string;
}

/** The probe: who answers (also read, with the same names, when the connection opens). */
const IDENTITY_SQL = 'SELECT pg_backend_pid() AS pid, pg_postmaster_start_time()::text AS started';

/** A statement with a client-side bound (pg reads `query_timeout` per query; its types omit it). */
function bounded(text: string, values: unknown[], timeoutMs: number): pg.QueryConfig {
  return { text, values, query_timeout: timeoutMs } as pg.QueryConfig;
}

export class LockConnection {
  private state: 'open' | 'closed' = 'open';
  private lostListener: ((reason: string) => void) | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /**
   * The statement under way (a caller's or a probe), settled or not; it never rejects. pg would
   * queue a second statement on a busy client itself, but warns that this is deprecated: a
   * probe due while a caller's statement runs (or the other way round) waits for it here.
   */
  private busy: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly client: pg.Client,
    private readonly ctx: PgContext,
    private readonly identity: ServerIdentity,
  ) {
    client.on('error', () => this.lose('the connection holding the lock was lost'));
    client.on('end', () => this.lose('the connection holding the lock was lost'));
  }

  static async open(ctx: PgContext, operation: string): Promise<LockConnection> {
    ctx.assertOpen();
    const client = new pg.Client({
      connectionTimeoutMillis: ctx.timing.connectTimeoutMs,
      ...ctx.clientConfig,
      application_name: 'leasehold-lock',
      keepAlive: true,
      keepAliveInitialDelayMillis: ctx.timing.keepAliveIdleMs,
      // A lock wait may last as long as the lock is held elsewhere: no statement bound here
      // (bounded statements pass their own timeout, see `query`).
      statement_timeout: 0,
      query_timeout: 0,
    });
    // Until the connection is ours, an error is reported by connect() itself.
    client.on('error', () => {});
    try {
      await client.connect();
      const keepalive = lockSessionKeepalive(ctx.timing);
      const [row] = (
        await client.query<{ pid: number; started: string; standby: boolean }>(
          bounded(
            `SELECT set_config('tcp_keepalives_idle', $1, false),
                    set_config('tcp_keepalives_interval', $2, false),
                    set_config('tcp_keepalives_count', $3, false),
                    pg_backend_pid() AS pid, pg_postmaster_start_time()::text AS started,
                    pg_is_in_recovery() AS standby`,
            [`${keepalive.idleS}s`, `${keepalive.intervalS}s`, String(keepalive.count)],
            ctx.timing.queryTimeoutMs,
          ),
        )
      ).rows;
      // A standby grants advisory locks of its own, unseen by the primary and by every other
      // standby: a lock taken there excludes nobody. Reached during a failover (a proxy still
      // routing to a demoted primary, a DNS name not yet moved), it is an outage: unavailable,
      // and the caller's retry connects again (decision 0224).
      if (row!.standby)
        throw new UnavailableError(
          `${operation}: database unavailable (the connection reached a standby, in recovery)`,
          undefined,
          { reason: 'standby' },
        );
      return new LockConnection(client, ctx, { pid: row!.pid, startedAt: row!.started });
    } catch (error) {
      destroyConnection(client);
      await client.end().catch(() => {});
      throw mapPgError(error, operation);
    }
  }

  /** The server process of this connection: what pg_cancel_backend needs to stop a wait. */
  get backendPid(): number {
    return this.identity.pid;
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Called once when the connection fails, is closed by the server, or stops answering. */
  onLost(listener: (reason: string) => void): void {
    this.lostListener = listener;
  }

  /**
   * Runs one statement, bounded by `queryTimeoutMs` unless `wait` (a lock wait); driver errors
   * are left raw so callers can read their SQLSTATE. A statement that times out loses the
   * connection: its state is unknown, and so is the lock's.
   */
  async query<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
    { wait = false }: { wait?: boolean } = {},
  ): Promise<R[]> {
    try {
      const result = await this.oneAtATime(() =>
        this.client.query<R>(
          wait ? { text, values } : bounded(text, values, this.ctx.timing.queryTimeoutMs),
        ),
      );
      return result.rows;
    } catch (error) {
      if (/Query read timeout/i.test((error as Error).message ?? '')) {
        this.lose('the server did not answer on the connection holding the lock');
        throw new UnavailableError(`lock statement: database unavailable (no answer)`, error);
      }
      throw error;
    }
  }

  /** Starts probing (the lock is held from now): see the module comment. */
  watch(): void {
    if (this.state !== 'open' || this.probeTimer) return;
    this.trustFrom(performance.now());
  }

  /**
   * Ends the connection without waiting for the server: a backend still sitting in a lock queue
   * reads the goodbye only once granted, and then exits, which frees the lock it just got.
   */
  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.stopProbing();
    void this.client.end().catch(() => {});
  }

  /** The last answered probe was sent at `sentAt`: trust until the bound, probe again soon. */
  private trustFrom(sentAt: number): void {
    this.stopProbing();
    const now = performance.now();
    const { lockProbeIntervalMs } = this.ctx.timing;
    this.deadlineTimer = setTimeout(
      () => this.deadlinePassed(),
      Math.max(0, sentAt + lockLossBoundMs(this.ctx.timing) - now),
    );
    this.probeTimer = setTimeout(
      () => void this.probe(),
      Math.max(0, sentAt + lockProbeIntervalMs - now),
    );
    // A process that only holds a lock may still exit: probes do not keep it alive.
    this.deadlineTimer.unref();
    this.probeTimer.unref();
  }

  private probe(): Promise<void> {
    return this.oneAtATime(() => this.runProbe());
  }

  /** Runs `statement` once every statement started before it has settled. */
  private oneAtATime<T>(statement: () => Promise<T>): Promise<T> {
    const result = this.busy.then(statement);
    this.busy = result.catch(() => {});
    return result;
  }

  private async runProbe(): Promise<void> {
    if (this.state !== 'open') return;
    const sentAt = performance.now();
    let answer: { pid: number; started: string } | undefined;
    try {
      [answer] = (await this.client.query<{ pid: number; started: string }>(IDENTITY_SQL)).rows;
    } catch {
      // An error on the connection (or in the lock's transaction) ends the lock.
      this.lose('the connection holding the lock failed its liveness probe');
      return;
    }
    if (this.state !== 'open') return;
    if (answer?.pid !== this.identity.pid || answer.started !== this.identity.startedAt) {
      this.lose('the server holding the lock changed (restarted or failed over)');
      return;
    }
    this.trustFrom(sentAt);
  }

  /**
   * The trust deadline passed with no answered probe. The answer may be sitting in the socket
   * already, behind a busy event loop (timers run before I/O in a turn): look once more after
   * this turn's I/O before giving up.
   */
  private deadlinePassed(): void {
    const probeTimer = this.probeTimer;
    setImmediate(() => {
      if (this.state !== 'open' || this.probeTimer !== probeTimer) return; // a probe answered
      this.lose('the server did not answer a liveness probe in time (silent or partitioned)');
    });
  }

  private stopProbing(): void {
    clearTimeout(this.probeTimer);
    clearTimeout(this.deadlineTimer);
    this.probeTimer = undefined;
    this.deadlineTimer = undefined;
  }

  private lose(reason: string): void {
    if (this.state !== 'open') return;
    this.state = 'closed';
    this.stopProbing();
    // The server may be unreachable: do not wait for its goodbye, drop the socket.
    destroyConnection(this.client);
    void this.client.end().catch(() => {});
    this.lostListener?.(reason);
  }
}
