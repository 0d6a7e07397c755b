/**
 * Ten processes all run `leasehold migrate` on the same empty schema, as a fleet of instances
 * does on a deploy. The migrator's advisory lock must serialise them: every process succeeds,
 * every migration is applied exactly once, and the schema ends current.
 *
 * Processes started together still reach the database seconds apart (each loads tsx), and a
 * migration takes milliseconds, so without a barrier they would simply run one after another
 * and prove nothing. The barrier: the test drops the empty schema in an open transaction, which
 * holds an exclusive lock on it, so every migrate blocks (on the migrator's lock, or on the
 * schema itself when creating its first table) until all ten wait; then the test rolls back.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { MIGRATIONS } from '../../src/engine/postgres/migrations/index.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, schemaFor, testDatabaseUrl } from '../support/database.js';
import { waitFor } from '../support/wait.js';

/** The newest version (numbers are given out ahead of merges, so not always the count). */
const NEWEST = Math.max(...MIGRATIONS.map((m) => m.version));

const PROCESSES = 10;

after(closeTestDatabase);

describe('leasehold migrate run by many processes at once', () => {
  it('applies every migration exactly once when ten processes migrate an empty schema together', async (t) => {
    const url = await testDatabaseUrl();
    const schema = schemaFor('concurrent migrate');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    let passed = false;
    try {
      await pool.query(`CREATE SCHEMA "${schema}"`);
      const barrier = await pool.connect();
      const started = performance.now();
      let children: CliProcess[];
      try {
        await barrier.query('BEGIN');
        await barrier.query(`DROP SCHEMA "${schema}"`);
        children = Array.from({ length: PROCESSES }, () =>
          startCli(['migrate', '--database-url', url, '--schema', schema]),
        );
        // Ten tsx start-ups on a loaded two-core machine can take minutes, so the wait is a
        // liveness bound, not a timing claim; a process that gives up fails the test at once.
        const exitedEarly = children.map(() => false);
        children.forEach((c, i) => void c.exited().then(() => (exitedEarly[i] = true)));
        await waitFor(
          `all ${PROCESSES} processes to wait at the barrier`,
          async () => {
            const gone = exitedEarly.indexOf(true);
            if (gone >= 0)
              throw new Error(
                `process ${gone} exited before the barrier:\n${children[gone]!.lines.join('\n')}`,
              );
            return (await waitingMigrations(pool, schema)) === PROCESSES;
          },
          { timeoutMs: 300_000, intervalMs: 50 },
        );
      } finally {
        await barrier.query('ROLLBACK');
        barrier.release();
      }
      const exits = await Promise.all(children.map((c) => c.exited()));
      const elapsedMs = performance.now() - started;
      exits.forEach((exit, i) =>
        assert.deepEqual(
          exit,
          { code: 0, signal: null },
          `process ${i} failed:\n${children[i]!.lines.join('\n')}`,
        ),
      );

      const known = MIGRATIONS.map((m) => m.version).sort((a, b) => a - b);
      const { rows } = await pool.query<{ version: number; name: string }>(
        `SELECT version, name FROM "${schema}".migrations ORDER BY version`,
      );
      assert.deepEqual(
        rows.map((r) => r.version),
        known,
        'one row per known migration version, no gap and no duplicate',
      );
      assert.equal(Math.max(...rows.map((r) => r.version)), NEWEST);
      assert.deepEqual(
        rows.map((r) => r.name),
        [...MIGRATIONS].sort((a, b) => a.version - b.version).map((m) => m.name),
      );

      // Each process says what it applied: between them, every version exactly once.
      const applied = children.flatMap((c) => {
        const line = c.lines.find((l) => l.startsWith('applied migrations '));
        const list = line?.match(/^applied migrations ([\d, ]+);/)?.[1];
        return list ? list.split(', ').map(Number) : [];
      });
      assert.deepEqual(
        applied.sort((a, b) => a - b),
        known,
      );
      const upToDate = children.filter((c) =>
        c.lines.some((l) => l.includes(`is up to date at version ${NEWEST}`)),
      ).length;
      assert.ok(upToDate >= 1, 'the processes that came later found nothing left to do');
      t.diagnostic(
        `${PROCESSES} processes in ${elapsedMs.toFixed(0)} ms; ${PROCESSES - upToDate} applied ` +
          `migrations, ${upToDate} found the schema at version ${NEWEST}`,
      );
      passed = true;
    } finally {
      if (passed) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      else console.error(`# kept schema "${schema}" of the failed migrate test for inspection`);
      await pool.end();
    }
  });
});

/**
 * Backends blocked on this schema's migrator lock or on the schema itself. pg_locks shows a
 * bigint advisory key split in two: its high half as classid and its low half as objid.
 */
async function waitingMigrations(pool: pg.Pool, schema: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks l
     WHERE NOT l.granted AND (
       (l.locktype = 'object' AND l.classid = 'pg_namespace'::regclass
         AND l.objid = (SELECT oid FROM pg_namespace WHERE nspname = $1))
       OR (l.locktype = 'advisory'
         AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($2, 0)))`,
    [schema, `leasehold.migrate.${schema}`],
  );
  return rows[0]!.n;
}
