/**
 * What every PostgreSQL family module (leases, locks, jobs, workers, notifications) shares:
 * the pool, the quoted schema, the pinned clock and the one door to the database. Families
 * are small classes over this context; PostgresEngine composes them behind the Engine seam.
 */
import type pg from 'pg';
import type { Clock } from '../../core/clock.js';
import { ClosedError } from '../../core/errors.js';
import type { CallerTransaction } from '../types.js';
import type { ConnectionTiming } from './connection-timing.js';
import { isConnectionInDoubt, isWrongServer, mapPgError } from './pg-errors.js';
import { QUERY_TYPES } from './timestamp-parser.js';
import { notifyChannelOf } from './notify-channel.js';

export class PgContext {
  private closed = false;

  constructor(
    readonly pool: pg.Pool,
    /** The schema name, validated as a lower-case identifier. */
    readonly schema: string,
    /** The schema, quoted: the only identifier ever spliced into SQL. */
    readonly quotedSchema: string,
    private readonly pinnedClock: Clock | undefined,
    /** Prefix for named prepared statements; undefined disables them (pgbouncer transaction mode). */
    private readonly statementPrefix: string | undefined,
    /** Settings for a dedicated client (listener, session and advisory locks), as the pool's. */
    readonly clientConfig: pg.ClientConfig,
    /** Timeouts, keepalive and lock probing (connection-timing.ts). */
    readonly timing: ConnectionTiming,
  ) {}

  /** The NOTIFY channel of this schema (notify-channel.ts). */
  get notifyChannel(): string {
    return notifyChannelOf(this.schema);
  }

  /** `$now` for time-sensitive statements: the pinned clock's time, or null (database clock). */
  pinnedNow(): Date | null {
    return this.pinnedClock ? this.pinnedClock.now() : null;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  markClosed(): void {
    this.closed = true;
  }

  assertOpen(): void {
    if (this.closed) throw new ClosedError('PostgresEngine');
  }

  /** The answer of a call with nothing to send: still refused, like any call, once closed. */
  emptyAnswer<T>(answer: T): T {
    this.assertOpen();
    return answer;
  }

  /**
   * The single door to the database: names the statement, runs it on the pool or on the
   * caller's transaction, and maps every driver error to a LeaseholdError.
   */
  query<R extends pg.QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
    tx?: CallerTransaction,
  ): Promise<R[]> {
    return this.run<R>(name, text, values, tx);
  }

  private async run<R extends pg.QueryResultRow>(
    name: string,
    text: string,
    values: unknown[],
    tx: CallerTransaction | undefined,
  ): Promise<R[]> {
    this.assertOpen();
    try {
      if (tx) {
        // A caller's client may be any pg-compatible object: plain text + values is the
        // least we can ask of it (a named statement would tie us to node-postgres).
        const result = await tx.query(text, values);
        return result.rows as R[];
      }
      const config: pg.QueryConfig = this.statementPrefix
        ? { name: this.statementPrefix + name, text, values, types: QUERY_TYPES }
        : { text, values, types: QUERY_TYPES };
      const result = await this.pool.query<R>(config);
      return result.rows;
    } catch (error) {
      throw mapPgError(error, name);
    }
  }

  /**
   * `query` for a hot statement run on the pool: rows come back as arrays of column values in
   * SELECT order, which spares node-postgres an object per row.
   */
  async queryValues(name: string, text: string, values: unknown[]): Promise<unknown[][]> {
    this.assertOpen();
    try {
      const config: pg.QueryArrayConfig = {
        ...(this.statementPrefix ? { name: this.statementPrefix + name } : {}),
        text,
        values,
        types: QUERY_TYPES,
        rowMode: 'array',
      };
      const result = await this.pool.query(config);
      return result.rows;
    } catch (error) {
      throw mapPgError(error, name);
    }
  }

  /** Runs `fn` in a transaction on one pooled client (BEGIN … COMMIT, ROLLBACK on error). */
  async transaction<T>(name: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    this.assertOpen();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw mapPgError(error, name);
    }
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      await rollBackAndRelease(client, error);
      throw mapPgError(error, name);
    }
  }

  /**
   * `query` on a client the caller checked out (inside its transaction): a named statement when
   * they are enabled, timestamps parsed as everywhere else. Errors are the caller's to map.
   */
  async clientQuery<R extends pg.QueryResultRow>(
    client: pg.ClientBase,
    name: string,
    text: string,
    values: unknown[],
  ): Promise<R[]> {
    const config: pg.QueryConfig = this.statementPrefix
      ? { name: this.statementPrefix + name, text, values, types: QUERY_TYPES }
      : { text, values, types: QUERY_TYPES };
    const result = await client.query<R>(config);
    return result.rows;
  }
}

/**
 * Ends a transaction that failed with `error` and gives its client back to the pool: rolled
 * back, or dropped when the connection is in doubt.
 */
export async function rollBackAndRelease(client: pg.PoolClient, error: unknown): Promise<void> {
  if (isConnectionInDoubt(error)) {
    // A statement that timed out may still be running, or the server may be silent: a
    // ROLLBACK would only wait for the same answer. Drop the connection instead; the server
    // rolls the transaction back when it sees it go.
    destroyConnection(client);
    client.release(error as Error);
  } else if (isWrongServer(error)) {
    // A standby or a server on its way down (a failover): ROLLBACK would succeed and hand
    // the pool a connection that can never write again. Drop it; the next connection goes
    // through the proxy or DNS name to the new primary.
    client.release(error as Error);
  } else {
    // A ROLLBACK that fails (or times out) leaves the connection in doubt too.
    const failed = await client.query('ROLLBACK').then(
      () => undefined,
      (rollbackError: unknown) => rollbackError as Error,
    );
    if (failed) destroyConnection(client);
    client.release(failed);
  }
}

/** Closes a client's socket at once (pg's end() would wait for a server that may never answer). */
export function destroyConnection(client: pg.ClientBase): void {
  (
    client as unknown as { connection?: { stream?: { destroy(): void } } }
  ).connection?.stream?.destroy();
}
