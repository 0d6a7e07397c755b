import type pg from 'pg';
import { ConflictError } from '../../core/errors.js';
import type { MigrationReport } from '../engine.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { mapPgError } from './pg-errors.js';

/**
 * Applies numbered, forward-only migrations. Many processes may start at once: every step runs
 * in a transaction that first takes a transaction-scoped advisory lock keyed by the schema name,
 * so steps apply one after another and whoever comes second finds nothing left to do. Each
 * migration is its own transaction with its bookkeeping row, so a failure leaves the schema at
 * the last complete version. Transaction-scoped locks (not session ones) also work through
 * pgbouncer in transaction mode, where consecutive statements may reach different servers.
 */
/**
 * Migrations run without the pool's statement timeout (a DDL step or the wait for another
 * instance's migration may take long); the client still gives up after this long.
 */
const MIGRATION_QUERY_TIMEOUT_MS = 3_600_000;

/** One migration statement, with its own client-side bound (pg's types omit `query_timeout`). */
function migrationQuery(text: string, values?: unknown[]): pg.QueryConfig {
  return { text, values, query_timeout: MIGRATION_QUERY_TIMEOUT_MS } as pg.QueryConfig;
}

export class Migrator {
  private readonly lockKey: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly quotedSchema: string,
    private readonly migrations: readonly Migration[] = MIGRATIONS,
  ) {
    this.lockKey = `leasehold.migrate.${schema}`;
  }

  async migrate(): Promise<MigrationReport> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw mapPgError(error, 'migrate');
    }
    try {
      const done = await this.locked(client, async () => {
        await client.query(migrationQuery(`CREATE SCHEMA IF NOT EXISTS ${this.quotedSchema}`));
        await client.query(
          migrationQuery(
            `CREATE TABLE IF NOT EXISTS ${this.quotedSchema}.migrations (
             version    integer PRIMARY KEY,
             name       text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now()
           )`,
          ),
        );
        return this.appliedVersions(client);
      });
      const newest = Math.max(0, ...done);
      const known = Math.max(0, ...this.migrations.map((m) => m.version));
      if (newest > known) {
        throw new ConflictError(
          `schema "${this.schema}" is at version ${newest}, newer than this leasehold knows (${known}); upgrade leasehold`,
        );
      }
      const applied: number[] = [];
      for (const migration of this.migrations) {
        if (done.has(migration.version)) continue;
        const ran = await this.locked(client, async () => {
          // Someone may have applied it since we looked: check again under the lock.
          if ((await this.appliedVersions(client)).has(migration.version)) return false;
          await client.query(migrationQuery(migration.up(this.quotedSchema)));
          await client.query(
            migrationQuery(
              `INSERT INTO ${this.quotedSchema}.migrations (version, name) VALUES ($1, $2)`,
              [migration.version, migration.name],
            ),
          );
          return true;
        });
        if (ran) applied.push(migration.version);
      }
      // Every known migration is now applied, by us or by a process that got there first.
      return { applied, version: known };
    } catch (error) {
      throw mapPgError(error, 'migrate');
    } finally {
      client.release();
    }
  }

  /** Runs `fn` in a transaction holding the schema's migration lock. */
  private async locked<T>(client: pg.PoolClient, fn: () => Promise<T>): Promise<T> {
    await client.query(migrationQuery('BEGIN'));
    // The pool's statement_timeout stays off for the whole step (see MIGRATION_QUERY_TIMEOUT_MS).
    await client.query(migrationQuery('SET LOCAL statement_timeout = 0'));
    try {
      await client.query(
        migrationQuery('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [this.lockKey]),
      );
      const result = await fn();
      await client.query(migrationQuery('COMMIT'));
      return result;
    } catch (error) {
      await client.query(migrationQuery('ROLLBACK')).catch(() => {});
      throw error;
    }
  }

  private async appliedVersions(client: pg.PoolClient): Promise<Set<number>> {
    const { rows } = await client.query<{ version: number }>(
      migrationQuery(`SELECT version FROM ${this.quotedSchema}.migrations ORDER BY version`),
    );
    return new Set(rows.map((r) => r.version));
  }
}
