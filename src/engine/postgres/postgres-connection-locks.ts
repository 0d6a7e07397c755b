/**
 * Advisory and session locks on PostgreSQL: each held (or awaited) lock owns one dedicated
 * connection. A handle's signal fires when that connection drops, because then the server has
 * already freed the lock, and when it stops answering its liveness probes (lock-connection.ts),
 * before the server could free it. Waiting happens in the server's lock queue; cancelling a wait sends
 * pg_cancel_backend from the pool and drops the connection, which frees the lock even if the
 * server granted it in the same instant.
 */
import { AbortedError, LeaseLostError } from '../../core/errors.js';
import type { FencingToken } from '../../core/types.js';
import {
  waitAbortError,
  type ConnectionLock,
  type ConnectionLockOperations,
  type ConnectionLockParams,
  type ConnectionLockWaitParams,
  type SessionLock,
} from '../connection-locks.js';
import type { PgContext } from './context.js';
import { LockConnection } from './lock-connection.js';
import { refuseUntrustedConnectionLocks } from './server-flavour.js';
import type { LockQueries } from './lock-queries.js';
import { mapPgError } from './pg-errors.js';
import { toSafeInteger } from './rows.js';
import { withEpoch } from './epoch.js';

const LOCK_NOT_AVAILABLE = '55P03';

class PgConnectionLock implements ConnectionLock {
  private readonly controller = new AbortController();

  constructor(
    readonly name: string,
    private readonly conn: LockConnection,
    private readonly unlock: { text: string; values: unknown[] },
    private readonly forget: (lock: PgConnectionLock) => void,
  ) {
    conn.onLost((reason) => this.drop(reason));
    if (!conn.isOpen) this.drop('the connection holding the lock was lost');
    // Held from now: a silent server is noticed by probes, not only by a socket error.
    else conn.watch();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get backendPid(): number {
    return this.conn.backendPid;
  }

  async release(): Promise<boolean> {
    if (this.controller.signal.aborted) return false;
    this.controller.abort(new AbortedError(`lock "${this.name}" was released by its holder`));
    this.forget(this);
    try {
      await this.conn.query(this.unlock.text, this.unlock.values);
      return true;
    } catch {
      return false; // the connection died under us: the server freed the lock anyway
    } finally {
      this.conn.close();
    }
  }

  /** The lock is gone (connection lost, engine closed): tell the holder, free the connection. */
  drop(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(new LeaseLostError(this.name, reason));
    this.forget(this);
    this.conn.close();
  }
}

class PgSessionLock extends PgConnectionLock implements SessionLock {
  constructor(
    name: string,
    conn: LockConnection,
    readonly token: FencingToken,
    forget: (lock: PgConnectionLock) => void,
  ) {
    super(name, conn, { text: 'ROLLBACK', values: [] }, forget);
  }
}

export class PostgresConnectionLocks implements ConnectionLockOperations {
  private readonly held = new Set<PgConnectionLock>();
  private readonly waiting = new Set<LockConnection>();
  private readonly forget = (lock: PgConnectionLock): void => void this.held.delete(lock);

  constructor(
    protected readonly ctx: PgContext,
    protected readonly sql: LockQueries,
  ) {}

  async advisoryTryLock(p: ConnectionLockParams): Promise<ConnectionLock | null> {
    await refuseUntrustedConnectionLocks(this.ctx, 'advisory locks');
    const key = this.advisoryKey(p.name);
    const conn = await LockConnection.open(this.ctx, 'AdvisoryTryLock');
    try {
      const [row] = await withEpoch(this.ctx, 'AdvisoryTryLock', () =>
        conn.query<{ locked: boolean }>(this.sql.AdvisoryTryLock, [key]),
      );
      if (!row?.locked) {
        conn.close();
        return null;
      }
    } catch (error) {
      conn.close();
      throw mapPgError(error, 'AdvisoryTryLock');
    }
    return this.track(new PgConnectionLock(p.name, conn, this.advisoryUnlock(key), this.forget));
  }

  async advisoryLock(p: ConnectionLockWaitParams): Promise<ConnectionLock> {
    if (p.signal.aborted) throw waitAbortError(p.signal);
    await refuseUntrustedConnectionLocks(this.ctx, 'advisory locks');
    const key = this.advisoryKey(p.name);
    const conn = await this.openForWait('AdvisoryLock');
    await this.waitCancellably(
      conn,
      withEpoch(this.ctx, 'AdvisoryLock', () =>
        conn.query(this.sql.AdvisoryLock, [key], { wait: true }),
      ),
      p.signal,
      'AdvisoryLock',
    );
    return this.track(new PgConnectionLock(p.name, conn, this.advisoryUnlock(key), this.forget));
  }

  async sessionLockTryAcquire(p: ConnectionLockParams): Promise<SessionLock | null> {
    await refuseUntrustedConnectionLocks(this.ctx, 'session locks');
    const conn = await LockConnection.open(this.ctx, 'SessionLockTryAcquire');
    try {
      await this.beginSession(conn, p.name);
      try {
        await conn.query(this.sql.SessionLockTryAcquire, [p.name]);
      } catch (error) {
        if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
        conn.close();
        return null;
      }
      return this.track(await this.sessionHandle(conn, p.name));
    } catch (error) {
      conn.close();
      throw mapPgError(error, 'SessionLockTryAcquire');
    }
  }

  async sessionLockAcquire(p: ConnectionLockWaitParams): Promise<SessionLock> {
    if (p.signal.aborted) throw waitAbortError(p.signal);
    await refuseUntrustedConnectionLocks(this.ctx, 'session locks');
    const conn = await this.openForWait('SessionLockAcquire');
    try {
      await this.beginSession(conn, p.name);
    } catch (error) {
      this.waiting.delete(conn);
      conn.close();
      throw mapPgError(error, 'SessionLockAcquire');
    }
    const wait = conn.query(this.sql.SessionLockAcquire, [p.name], { wait: true });
    await this.waitCancellably(conn, wait, p.signal, 'SessionLockAcquire');
    try {
      return this.track(await this.sessionHandle(conn, p.name));
    } catch (error) {
      conn.close();
      throw mapPgError(error, 'SessionLockAcquire');
    }
  }

  /** Engine closing: every holder is told its lock is gone, and every wait is dropped. */
  close(): void {
    for (const lock of [...this.held]) lock.drop('the engine was closed');
    for (const conn of this.waiting) conn.close();
    this.waiting.clear();
  }

  private advisoryKey(name: string): string {
    return `${this.ctx.schema}:${name}`;
  }

  private advisoryUnlock(key: string): { text: string; values: unknown[] } {
    return { text: this.sql.AdvisoryUnlock, values: [key] };
  }

  private async beginSession(conn: LockConnection, name: string): Promise<void> {
    await conn.query(this.sql.SessionLockEnsure, [name]);
    await conn.query('BEGIN');
  }

  /** The token is taken only now, with the row lock held, so terms get it in their order. */
  private async sessionHandle(conn: LockConnection, name: string): Promise<PgSessionLock> {
    const token = await this.drawToken(conn, name);
    return new PgSessionLock(name, conn, token, this.forget);
  }

  /**
   * A new term's token, durable before it is returned: drawn on the pool in a transaction of
   * its own that commits with its WAL flushed, never in the holding transaction, which ends with
   * ROLLBACK and so never flushes what it wrote (a token from it could come back after a crash).
   * `conn` is the holding connection, unused here: the chaos harness's broken variant draws
   * the token on it to prove the checkers see the difference.
   */
  protected async drawToken(conn: LockConnection, name: string): Promise<FencingToken> {
    void conn;
    const [row] = await withEpoch(this.ctx, 'SessionLockToken', () =>
      this.ctx.query<{ token: string }>('SessionLockToken', this.sql.SessionLockToken, [name]),
    );
    return toSafeInteger(row!.token, 'session_lock_terms.token');
  }

  private async openForWait(operation: string): Promise<LockConnection> {
    const conn = await LockConnection.open(this.ctx, operation);
    this.waiting.add(conn);
    return conn;
  }

  /** Resolves when `wait` (a statement queued for a lock) succeeds; rejects on abort or error. */
  private async waitCancellably(
    conn: LockConnection,
    wait: Promise<unknown>,
    signal: AbortSignal,
    operation: string,
  ): Promise<void> {
    let onAbort!: () => void;
    const aborted = new Promise<'aborted'>((resolve) => (onAbort = () => resolve('aborted')));
    signal.addEventListener('abort', onAbort, { once: true });
    // The signal may have fired while the connection was opening, before anyone listened.
    if (signal.aborted) onAbort();
    try {
      const outcome = await Promise.race([wait.then(() => 'granted' as const), aborted]);
      if (outcome === 'granted' && !signal.aborted) return;
    } catch (error) {
      if (!signal.aborted) {
        conn.close();
        throw mapPgError(error, operation);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.waiting.delete(conn);
    }
    // Aborted: take the backend out of the lock queue, then drop the connection, which also
    // frees the lock should the server have granted it meanwhile.
    wait.catch(() => {});
    await this.ctx
      .query('LockWaitCancel', this.sql.LockWaitCancel, [conn.backendPid])
      .catch(() => {});
    conn.close();
    throw waitAbortError(signal);
  }

  private track<T extends PgConnectionLock>(lock: T): T {
    if (!lock.signal.aborted) this.held.add(lock);
    return lock;
  }
}
