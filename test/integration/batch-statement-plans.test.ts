/**
 * The statements of a batch of named jobs (complete, fail, renew, progress, hand back) read only
 * the batch's rows, however the table changed since the connection's first batches (decision
 * 0281). They used to join an unnest of the batch with `jobs` through a named statement whose
 * generic plan, made in a fresh table's first seconds, scanned all of `jobs` for every flush:
 * in a sustained run, completions fell behind and each flush got slower than the last.
 *
 * PostgreSQL's own counters are the measure: the entries `jobs_pkey` returned and the rows
 * sequential scans of `jobs` read (`pg_stat_user_indexes`, `pg_stat_user_tables`), once the engine's one connection has closed and its
 * counts are flushed (waited for by its deletes showing up, counted in the same flush).
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
      const reader = new pg.Client({ connectionString: url });
      await reader.connect();
      try {
        const counts = async () =>
          (
            await reader.query<{ deleted: string; read: string }>(
              `SELECT t.n_tup_del::text AS deleted,
                 (t.seq_tup_read + (SELECT i.idx_tup_read FROM pg_stat_user_indexes i
                   WHERE i.relid = t.relid AND i.indexrelname = 'jobs_pkey'))::text AS read
               FROM pg_stat_user_tables t WHERE t.schemaname = $1 AND t.relname = 'jobs'`,
              [schema],
            )
          ).rows[0];
        const total = JOBS + 20;
        await waitFor(
          "the engine's table counters",
          async () => Number((await counts())?.deleted ?? 0) >= total,
        );
        const read = Number((await counts())!.read);
        // A claim reads its jobs' primary-key entries once, a completion twice (the claim wrote a
        // second row version): three a job. A scan of the table per flush read thousands.
        assert.ok(
          read <= 5 * total,
          `rows read by sequential scans and jobs_pkey: ${read} for ${total} jobs`,
        );
      } finally {
        await reader.end();
      }
    }));
});
