/**
 * Broken variant (b), for the chaos harness only: the session lock's fencing token is taken inside
 * the held transaction, from a counter row, instead of by a committed draw on the pool (decision
 * 0217). Every session-lock term
 * ends by rolling its transaction back (unlock is ROLLBACK; a dropped connection rolls back too),
 * and the counter's increment rolls back with it: the next holder is handed the same token, so a
 * fence cannot tell the two terms apart.
 */
import type { LockOperations } from '../../../src/engine/locks.js';
import { resolveConnectionTiming } from '../../../src/engine/postgres/connection-timing.js';
import { PgContext } from '../../../src/engine/postgres/context.js';
import { lockQueries } from '../../../src/engine/postgres/lock-queries.js';
import { PostgresConnectionLocks } from '../../../src/engine/postgres/postgres-connection-locks.js';
import type { LockConnection } from '../../../src/engine/postgres/lock-connection.js';
import { toSafeInteger } from '../../../src/engine/postgres/rows.js';
import type { FencingToken } from '../../../src/core/types.js';
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../../src/engine/postgres/postgres-engine.js';
import { quoteSchema } from '../../../src/engine/postgres/sql-identifiers.js';
import type { MigrationReport } from '../../../src/engine/engine.js';

/** Draws the token on the holding connection, inside the transaction that ends with ROLLBACK. */
class TokenInHeldTransactionLocks extends PostgresConnectionLocks {
  protected override async drawToken(conn: LockConnection): Promise<FencingToken> {
    const [row] = await conn.query<{ token: string }>(this.sql.SessionLockToken);
    return toSafeInteger(row!.token, 'chaos_session_token_counter.token');
  }
}

export class SessionTokenInTransactionEngine extends PostgresEngine {
  private readonly brokenLocks: TokenInHeldTransactionLocks;

  constructor(options: PostgresEngineOptions & { connectionString: string }) {
    super(options);
    const s = quoteSchema(this.schema);
    const sql = {
      ...lockQueries(s),
      // Deliberately inside the held transaction: rolled back when the term ends.
      SessionLockToken: `UPDATE ${s}.chaos_session_token_counter SET token = token + 1 RETURNING token`,
    };
    // The same connection settings as the engine's own lock family; no prepared statements.
    const ctx = new PgContext(
      this.pool,
      this.schema,
      s,
      undefined,
      undefined,
      { connectionString: options.connectionString },
      resolveConnectionTiming(options),
    );
    this.brokenLocks = new TokenInHeldTransactionLocks(ctx, sql);
  }

  override sessionLockAcquire: LockOperations['sessionLockAcquire'] = (p) =>
    this.brokenLocks.sessionLockAcquire(p);
  override sessionLockTryAcquire: LockOperations['sessionLockTryAcquire'] = (p) =>
    this.brokenLocks.sessionLockTryAcquire(p);

  override async migrate(): Promise<MigrationReport> {
    const report = await super.migrate();
    const s = quoteSchema(this.schema);
    await this.pool
      .query(`CREATE TABLE IF NOT EXISTS ${s}.chaos_session_token_counter (token bigint NOT NULL);
      INSERT INTO ${s}.chaos_session_token_counter (token)
        SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${s}.chaos_session_token_counter)`);
    return report;
  }

  override async close(): Promise<void> {
    this.brokenLocks.close();
    await super.close();
  }
}
