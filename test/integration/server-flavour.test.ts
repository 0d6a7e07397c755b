/**
 * Connection locks and the server flavour (src/engine/postgres/server-flavour.ts), on a real
 * PostgreSQL:
 * - on PostgreSQL, advisory and session locks work as before, and the engine reads `version()`
 *   once, not once per lock;
 * - a server that answers `version()` like CockroachDB has all four connection-lock operations
 *   refused with `unsupported` before any lock connection is opened, while lease locks work.
 *
 * No CockroachDB runs here: the second case is a real PostgreSQL whose sessions see a
 * `version()` of their own (a function in a schema placed before pg_catalog on the search path),
 * which answers a banner CockroachDB prints. The same function counts its calls, which is how
 * the first case sees how often the engine asks.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { isLeaseholdError } from '../../src/core/errors.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { closeTestDatabase, schemaFor, withSchema } from '../support/database.js';

after(closeTestDatabase);

const COCKROACH_BANNER =
  'CockroachDB CCL v21.1.1 (x86_64-apple-darwin19, built 2021/05/24 15:00:00, go1.15.11)';

async function onAdmin<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/**
 * A schema holding a `version()` that answers `banner` (or the server's own banner when null)
 * and records each call; returns it and a connection string whose sessions see it first.
 */
async function shadowVersion(
  url: string,
  banner: string | null,
): Promise<{ shadow: string; shadowedUrl: string }> {
  const shadow = schemaFor('version shadow');
  const answer = banner === null ? 'pg_catalog.version()' : pg.escapeLiteral(banner);
  await onAdmin(url, (c) =>
    c.query(`
      CREATE SCHEMA ${shadow};
      CREATE TABLE ${shadow}.calls (at timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE FUNCTION ${shadow}.version() RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        INSERT INTO ${shadow}.calls DEFAULT VALUES;
        RETURN ${answer};
      END $fn$;`),
  );
  const shadowedUrl = new URL(url);
  shadowedUrl.searchParams.set('options', `-c search_path=${shadow},pg_catalog`);
  return { shadow, shadowedUrl: shadowedUrl.toString() };
}

async function versionCalls(url: string, shadow: string): Promise<number> {
  return onAdmin(url, async (c) => {
    const { rows } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${shadow}.calls`);
    return rows[0]!.n;
  });
}

async function dropShadow(url: string, shadow: string): Promise<void> {
  await onAdmin(url, (c) => c.query(`DROP SCHEMA ${shadow} CASCADE`));
}

describe('connection locks and the server flavour', () => {
  it('on PostgreSQL: advisory and session locks work, and version() is read once per engine', () =>
    withSchema('flavour postgresql', async ({ url, schema }) => {
      const { shadow, shadowedUrl } = await shadowVersion(url, null);
      const engine = new PostgresEngine({ connectionString: shadowedUrl, schema, poolSize: 4 });
      const other = new PostgresEngine({ connectionString: url, schema, poolSize: 2 });
      try {
        await engine.migrate();
        const advisory = await engine.advisoryTryLock({ name: 'report' });
        assert.ok(advisory, 'the advisory lock is granted');
        assert.equal(await other.advisoryTryLock({ name: 'report' }), null, 'and it excludes');
        const session = await engine.sessionLockTryAcquire({ name: 'nightly' });
        assert.ok(session, 'the session lock is granted');
        assert.ok(session.token > 0, 'with a token');
        assert.equal(
          await other.sessionLockTryAcquire({ name: 'nightly' }),
          null,
          'and it excludes',
        );
        assert.equal(await advisory.release(), true);
        assert.equal(await session.release(), true);
        const again = await engine.advisoryTryLock({ name: 'report' });
        assert.ok(again);
        await again.release();
        // Three connection-lock calls, one read of the server's flavour.
        assert.equal(await versionCalls(url, shadow), 1);
      } finally {
        await engine.close();
        await other.close();
        await dropShadow(url, shadow);
      }
    }));

  it('on a server answering like CockroachDB: connection locks are refused as unsupported, lease locks work', () =>
    withSchema('flavour cockroach', async ({ url, schema }) => {
      const { shadow, shadowedUrl } = await shadowVersion(url, COCKROACH_BANNER);
      const engine = new PostgresEngine({ connectionString: shadowedUrl, schema, poolSize: 4 });
      try {
        await engine.migrate();
        const signal = new AbortController().signal;
        const attempts: Array<[string, () => Promise<unknown>]> = [
          ['advisory locks', () => engine.advisoryTryLock({ name: 'report' })],
          ['advisory locks', () => engine.advisoryLock({ name: 'report', signal })],
          ['session locks', () => engine.sessionLockTryAcquire({ name: 'nightly' })],
          ['session locks', () => engine.sessionLockAcquire({ name: 'nightly', signal })],
        ];
        for (const [feature, attempt] of attempts) {
          await assert.rejects(attempt, (error: unknown) => {
            assert.ok(isLeaseholdError(error, 'unsupported'), `${String(error)}`);
            assert.match(error.message, new RegExp(`^${feature} are refused: CockroachDB`));
            assert.match(error.message, /lease locks/);
            return true;
          });
        }
        // Refused before any lock connection: the advisory key is free, no session-lock row exists.
        const { keyFree, sessionRows } = await onAdmin(url, async (c) => {
          const key = `${schema}:report`;
          const free = await c.query<{ free: boolean }>(
            `SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS free`,
            [key],
          );
          await c.query(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [key]);
          const rows = await c.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "${schema}".session_locks`,
          );
          return { keyFree: free.rows[0]!.free, sessionRows: rows.rows[0]!.n };
        });
        assert.equal(keyFree, true);
        assert.equal(sessionRows, 0);
        assert.equal(await versionCalls(url, shadow), 1);
        // What the refusal points to works on the same server.
        const lease = await engine.leaseLockAcquire({ name: 'nightly', holder: 'a', ttlMs: 5_000 });
        assert.equal(lease.acquired, true);
      } finally {
        await engine.close();
        await dropShadow(url, shadow);
      }
    }));
});
