/**
 * A dedicated connection for one connection-bound lock (advisory or session). It is never
 * taken from the pool: a pooled client holding a lock would pin a pool slot for as long as the
 * lock is held, and a client returned to the pool with the lock still on it would hand the
 * lock to whoever borrows it next.
 *
 * States: connecting -> open -> closed. A connection that errors or ends while open calls
 * `onLost` once; `close()` (our own doing) never does. TCP keep-alive is on, so a peer that
 * vanished without closing the socket is noticed by the OS rather than never.
 */
import pg from 'pg';
import type { PgContext } from './context.js';
import { mapPgError } from './pg-errors.js';

export class LockConnection {
  private state: 'open' | 'closed' = 'open';
  private lostListener: (() => void) | undefined;

  private constructor(
    private readonly client: pg.Client,
    /** The server process of this connection: what pg_cancel_backend needs to stop a wait. */
    readonly backendPid: number,
  ) {
    const lost = (): void => {
      if (this.state !== 'open') return;
      this.state = 'closed';
      this.lostListener?.();
    };
    client.on('error', lost);
    client.on('end', lost);
  }

  static async open(ctx: PgContext, operation: string): Promise<LockConnection> {
    ctx.assertOpen();
    const client = new pg.Client({
      connectionTimeoutMillis: 10_000,
      ...ctx.clientConfig,
      application_name: 'leasehold-lock',
      keepAlive: true,
    });
    // Until the connection is ours, an error is reported by connect() itself.
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => {});
      throw mapPgError(error, operation);
    }
    const pid = (client as unknown as { processID: number | null }).processID;
    return new LockConnection(client, pid ?? 0);
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Called once when the connection fails or is closed by the server while open. */
  onLost(listener: () => void): void {
    this.lostListener = listener;
  }

  /** Runs one statement; driver errors are left raw so callers can read their SQLSTATE. */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const result = await this.client.query<R>(text, values);
    return result.rows;
  }

  /**
   * Ends the connection without waiting for the server: a backend still sitting in a lock queue
   * reads the goodbye only once granted, and then exits, which frees the lock it just got.
   */
  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    void this.client.end().catch(() => {});
  }
}
