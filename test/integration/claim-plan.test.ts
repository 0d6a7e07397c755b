/**
 * The claim statement keeps one generic plan per connection instead of being planned anew on
 * every call (claim-queries.ts, JobClaimBatch): planning cost four times the claim's execution,
 * on the path of every idle worker's pickup. PostgreSQL counts both kinds of plan for each
 * prepared statement of a session in `pg_prepared_statements`; a pool of one connection makes
 * that session ours to read.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

describe('the claim statement on PostgreSQL', () => {
  it('settles on a generic plan after the first few claims', () =>
    withSchema('claim generic plan', async ({ schema, url }) => {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      const engine = new PostgresEngine({ pool, schema });
      try {
        await engine.migrate();
        await engine.jobEnqueue({
          jobs: Array.from({ length: 80 }, (_, i) => ({
            queue: i % 2 ? 'a' : 'b',
            payload: { i },
            maxAttempts: 3,
          })),
        });
        let claimed = 0;
        for (let i = 0; i < 30; i++) {
          const [queues, limit] = i % 3 === 0 ? [['a', 'b'], 2] : [['a'], 1];
          claimed += (
            await engine.jobClaimBatch({ queues, workerId: 'w', limit, leaseTtlMs: 30_000 })
          ).length;
        }
        assert.equal(claimed, 40, 'every claim still comes back full');
        const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
          `SELECT generic_plans, custom_plans FROM pg_prepared_statements
           WHERE name LIKE '%JobClaimBatch.%' ORDER BY generic_plans + custom_plans DESC`,
        );
        // The statement is named after the jobs heap's size class (decision 0282): the first
        // claim runs under the name of an empty heap, the rest under this table's (two pages).
        assert.ok(rows.length >= 1 && rows.length <= 2, `claim statements: ${rows.length}`);
        const { generic_plans, custom_plans } = rows[0]!;
        // PostgreSQL plans a prepared statement's first five runs for their parameters, then
        // compares; a claim that lost the comparison would show 29 custom plans here.
        assert.ok(Number(custom_plans) <= 5, `custom plans: ${custom_plans}`);
        assert.ok(Number(generic_plans) >= 24, `generic plans: ${generic_plans}`);
      } finally {
        await engine.close();
        await pool.end();
      }
    }));
});
