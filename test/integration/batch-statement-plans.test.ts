/**
 * The statements that find jobs by id (the claim's update, and complete, fail, renew, progress,
 * hand back of a batch) read only their jobs' rows, however the table changed since the
 * connection's first runs (decisions 0281, 0282). A named statement's generic plan, made in a
 * fresh table's first seconds, used to scan all of `jobs` at every run: in a sustained run,
 * completions fell behind and each flush got slower than the last.
 *
 * PostgreSQL's own counters are the measure: the entries `jobs_pkey` returned and the rows
 * sequential scans of `jobs` read (`pg_stat_user_indexes`, `pg_stat_user_tables`), once the
 * engine's connections have closed and their counts are flushed.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import type { Job } from '../../src/core/types.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const JOBS = 30_000;
const BATCH = 500;
const CLAIMS = 100;
const CLAIM_LIMIT = 100;

describe('batch statements on PostgreSQL', () => {
  it('complete a batch by reading its rows, not the table, after the table has grown', () =>
    withSchema('batch statement plans', async ({ schema, url }) => {
      // The engine under test, on one connection: its statements' plans are that session's.
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      const engine = new PostgresEngine({ pool, schema });
      // The claims of the big batches come from another session, planned for the table as it is
      // then (its first five runs are), so that the counts below are the completions'.
      const claimerPool = new pg.Pool({ connectionString: url, max: 1 });
      const claimer = new PostgresEngine({ pool: claimerPool, schema });
      const spec = { queue: 'q', payload: {}, maxAttempts: 3 };
      const claim = (on: PostgresEngine, limit: number) =>
        on.jobClaimBatch({ queues: ['q'], workerId: 'w', limit, leaseTtlMs: 60_000 });
      const complete = async (jobs: readonly Job[]): Promise<number> => {
        const done = await engine.jobComplete({
          workerId: 'w',
          jobs: jobs.map((job) => ({ id: job.id, generation: job.generation, result: null })),
          remove: true,
        });
        assert.equal(done.length, jobs.length, 'every claimed job is completed');
        return done.length;
      };
      try {
        await engine.migrate();
        // Nothing may replan behind the test's back.
        await pool.query(`ALTER TABLE "${schema}".jobs SET (autovacuum_enabled = false)`);
        // A fresh table's first flushes: ten small batches (a named statement's generic plan is
        // made from its sixth run on).
        await engine.jobEnqueue({ jobs: Array.from({ length: 20 }, () => spec) });
        for (let i = 0; i < 10; i++) await complete(await claim(engine, 2));
        // The table grows; its jobs are claimed, then completed in batches.
        for (let n = 0; n < JOBS; n += 10_000)
          await engine.jobEnqueue({ jobs: Array.from({ length: 10_000 }, () => spec) });
        const inFlight: Job[] = [];
        for (let n = 0; n < JOBS; n += 10_000) inFlight.push(...(await claim(claimer, 10_000)));
        assert.equal(inFlight.length, JOBS);
        let completed = 0;
        for (let i = 0; i < JOBS; i += BATCH)
          completed += await complete(inFlight.slice(i, i + BATCH));
        assert.equal(completed, JOBS);
      } finally {
        await Promise.all([engine.close(), claimer.close()]);
        await Promise.all([pool.end(), claimerPool.end()]);
      }
      const read = await rowsRead(url, schema, 2 * (JOBS + 20));
      // A claim reads its jobs' primary-key entries once, a completion twice (the claim wrote a
      // second row version): three a job. A scan of the table per flush read thousands. The
      // first flush after the table grew may still scan it once, on the plan of the table's
      // first seconds: the one it answers moves the statements to a plan for the table's size.
      assert.ok(read <= 5 * (JOBS + 20), `rows read by sequential scans and jobs_pkey: ${read}`);
    }));

  it('claims by reading the jobs it takes, not the table, after the table has grown', () =>
    withSchema('claim statement plans', async ({ schema, url }) => {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      const engine = new PostgresEngine({ pool, schema });
      const spec = { queue: 'q', payload: {}, maxAttempts: 3 };
      const claim = (limit: number) =>
        engine.jobClaimBatch({ queues: ['q'], workerId: 'w', limit, leaseTtlMs: 60_000 });
      try {
        await engine.migrate();
        await pool.query(`ALTER TABLE "${schema}".jobs SET (autovacuum_enabled = false)`);
        // The claim's generic plan is made on a table of twenty jobs (from its sixth run on).
        await engine.jobEnqueue({ jobs: Array.from({ length: 20 }, () => spec) });
        for (let i = 0; i < 10; i++) await claim(1);
        for (let n = 0; n < JOBS; n += 10_000)
          await engine.jobEnqueue({ jobs: Array.from({ length: 10_000 }, () => spec) });
        let claimed = 10;
        for (let i = 0; i < CLAIMS; i++) claimed += (await claim(CLAIM_LIMIT)).length;
        assert.equal(claimed, 10 + CLAIMS * CLAIM_LIMIT, 'every claim takes its limit');
      } finally {
        await engine.close();
        await pool.end();
      }
      const read = await rowsRead(url, schema, JOBS + 20);
      // The claim reads its jobs through jobs_claim and updates them through jobs_pkey: one entry
      // a job, and a scan of the table at most once (on the plan of the table's first seconds)
      // before the size its answer carries moves it to a plan made for the table as it is.
      // Scanning per claim read the whole table a hundred times (3,002,200 rows).
      assert.ok(
        read <= 3 * (JOBS + 20),
        `rows read by sequential scans and jobs_pkey: ${read} for ${CLAIMS} claims`,
      );
    }));
});

/**
 * Rows read by sequential scans of `jobs` plus entries read from `jobs_pkey`, once the engine's
 * sessions have closed and flushed their counters: waited for by the rows they inserted and
 * deleted (`written`) showing up, which a closing session flushes in the same go.
 */
async function rowsRead(url: string, schema: string, written: number): Promise<number> {
  const reader = new pg.Client({ connectionString: url });
  await reader.connect();
  try {
    const counts = async () =>
      (
        await reader.query<{ written: string; read: string }>(
          `SELECT (t.n_tup_ins + t.n_tup_del)::text AS written,
             (t.seq_tup_read + (SELECT i.idx_tup_read FROM pg_stat_user_indexes i
               WHERE i.relid = t.relid AND i.indexrelname = 'jobs_pkey'))::text AS read
           FROM pg_stat_user_tables t WHERE t.schemaname = $1 AND t.relname = 'jobs'`,
          [schema],
        )
      ).rows[0];
    await waitFor(
      "the engine's table counters",
      async () => Number((await counts())?.written ?? 0) >= written,
    );
    return Number((await counts())!.read);
  } finally {
    await reader.end();
  }
}
