/**
 * Overlapping single enqueues share one statement (runtime/coalescer.ts, queue.ts). Two faults
 * of that sharing, on a real PostgreSQL (decision 0220):
 * - the shared statement's answer is lost after it committed: retrying each call alone would
 *   create every job a second time and tell the callers it succeeded;
 * - the shared statement stalls on a lock: a later list must not commit a partition's later job
 *   before its earlier one.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { isLeaseholdError } from '../../src/core/errors.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { AnswerCutter } from '../support/answer-cutter.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

/** How many jobs of `schema` carry each payload marker `m`. */
async function jobsByMarker(url: string, schema: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ m: string; n: string }>(
      `SELECT payload->>'m' AS m, count(*) AS n FROM "${schema}".jobs GROUP BY 1`,
    );
    return new Map(rows.map((r) => [r.m, Number(r.n)]));
  } finally {
    await client.end();
  }
}

describe('coalesced enqueues under faults', () => {
  it('never both creates a job twice and reports success when a shared answer is lost after commit', () =>
    withSchema('enqueue answer lost', async (ctx) => {
      await ctx.engine(); // migrates the schema
      const url = new URL(ctx.url);
      const cutter = new AnswerCutter(url.hostname, Number(url.port));
      const port = await cutter.listen();
      url.hostname = '127.0.0.1';
      url.port = String(port);
      const engine = new PostgresEngine({
        connectionString: url.toString(),
        schema: ctx.schema,
        poolSize: 4,
      });
      try {
        const lh = Leasehold.fromEngine(engine);
        const queue = lh.queue('mail');
        await queue.enqueue({ m: 'warm-up' }); // opens a connection, outside the cut
        // Made in one turn, the three calls go as one statement; the cutter loses its answer.
        cutter.arm(['cut-a', 'cut-b', 'cut-c']);
        const settled = await Promise.allSettled(
          ['cut-a', 'cut-b', 'cut-c'].map((m) => queue.enqueue({ m })),
        );
        await cutter.cut;
        const counts = await jobsByMarker(ctx.url, ctx.schema);
        settled.forEach((outcome, i) => {
          const m = ['cut-a', 'cut-b', 'cut-c'][i]!;
          // The statement committed before its answer was lost: the job exists, once.
          assert.equal(counts.get(m), 1, `${m} was created ${counts.get(m)} times`);
          if (outcome.status === 'rejected') {
            assert.ok(
              isLeaseholdError(outcome.reason, 'unavailable'),
              `${m}: ${String(outcome.reason)}`,
            );
            assert.equal(outcome.reason.details.outcome, 'unknown');
            assert.match(outcome.reason.message, /outcome is unknown/);
          }
        });
      } finally {
        await engine.close();
        await cutter.close();
      }
    }));

  it("keeps a partition's jobs in call order when the statement ahead of them stalls", () =>
    withSchema('enqueue stalled statement', async (ctx) => {
      const engine = await ctx.engine({ poolSize: 4 });
      const lockKey = 815_000 + Math.floor(Math.random() * 1_000);
      const holder = new pg.Client({ connectionString: ctx.url });
      await holder.connect();
      try {
        // A job whose payload says `hold` waits, in its INSERT, for a lock this test holds.
        await holder.query(`
          CREATE FUNCTION "${ctx.schema}".hold_marked() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.payload->>'hold' = 'yes' THEN PERFORM pg_advisory_xact_lock_shared(${lockKey}); END IF;
            RETURN NEW;
          END $$;
          CREATE TRIGGER hold_marked BEFORE INSERT ON "${ctx.schema}".jobs
            FOR EACH ROW EXECUTE FUNCTION "${ctx.schema}".hold_marked();`);
        await holder.query('SELECT pg_advisory_lock($1)', [lockKey]);
        const lh = Leasehold.fromEngine(engine);
        const queue = lh.queue('orders');
        const first = queue.enqueue({ m: 'first', hold: 'yes' }, { partitionKey: 'p' });
        await waitFor('the first enqueue to wait for the lock', async () => {
          const { rows } = await holder.query(
            `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`,
            [lockKey],
          );
          return rows.length > 0;
        });
        let secondDone = false;
        const second = queue.enqueue({ m: 'second' }, { partitionKey: 'p' });
        void second.then(() => (secondDone = true));
        // A job of no partition may go past the stalled statement; once it has committed, the
        // stall has long been noticed and any list that could carry the second job has gone.
        await queue.enqueue({ m: 'unrelated' });
        await new Promise((resolve) => setImmediate(resolve));
        const counts = await jobsByMarker(ctx.url, ctx.schema);
        assert.equal(counts.get('second'), undefined, "the partition's second job committed first");
        assert.equal(secondDone, false);
        await holder.query('SELECT pg_advisory_unlock($1)', [lockKey]);
        const [a, b] = await Promise.all([first, second]);
        assert.ok(a.id < b.id, `ids ${a.id}, ${b.id}`);
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()').catch(() => {});
        await holder.end();
      }
    }));
});
