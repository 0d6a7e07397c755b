import type pg from 'pg';
import { ConflictError } from '../../core/errors.js';
import type { MigrationReport } from '../engine.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { mapPgError } from './pg-errors.js';

/**
 * Applies numbered, forward-only migrations. Many processes may start at once: each takes a
 * session advisory lock keyed by the schema name, so they apply migrations one after another,
 * and whoever comes second finds nothing left to do. Each migration runs in its own transaction
 * with its bookkeeping row, so a failure leaves the schema at the last complete version.
 */
export class Migrator {
  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly quotedSchema: string,
    private readonly migrations: readonly Migration[] = MIGRATIONS,
  ) {}

  async migrate(): Promise<MigrationReport> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw mapPgError(error, 'migrate');
    }
    const lockKey = `leasehold.migrate.${this.schema}`;
    let locked = false;
    try {
      await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lockKey]);
      locked = true;
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.quotedSchema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.quotedSchema}.migrations (
           version    integer PRIMARY KEY,
           name       text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const { rows } = await client.query<{ version: number }>(
        `SELECT version FROM ${this.quotedSchema}.migrations ORDER BY version`,
      );
      const done = new Set(rows.map((r) => r.version));
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
        await this.apply(client, migration);
        applied.push(migration.version);
      }
      return { applied, version: Math.max(newest, ...applied) };
    } catch (error) {
      throw mapPgError(error, 'migrate');
    } finally {
      if (locked)
        await client
          .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey])
          .catch(() => {});
      client.release();
    }
  }

  private async apply(client: pg.PoolClient, migration: Migration): Promise<void> {
    await client.query('BEGIN');
    try {
      await client.query(migration.up(this.quotedSchema));
      await client.query(
        `INSERT INTO ${this.quotedSchema}.migrations (version, name) VALUES ($1, $2)`,
        [migration.version, migration.name],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }
}
