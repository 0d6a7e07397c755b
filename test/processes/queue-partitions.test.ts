// Per-partition FIFO across processes: 20 keys × 100 jobs, 3 worker processes × concurrency 8.
// Per key, jobs run in enqueue order and never two at once; a key whose jobs always fail ends
// in the dead letter without stalling any other key.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startScript } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/queue-worker.ts', import.meta.url).pathname;
const KEYS = 20;
const PER_KEY = 100;
const POISON = 'key-poison';

describe('queue partitions across processes', () => {
  it('keeps per-key order with one in flight per key, and a failing key stalls no other', async () => {
    await withSchema('queue partitions', async (ctx) => {
      const engine = await ctx.engine({ poolSize: 4 });
      await engine.pool.query(
        `CREATE TABLE "${ctx.schema}".effects (job_id bigint NOT NULL, generation bigint NOT NULL,
           worker text NOT NULL, partition_key text, started_at timestamptz, finished_at timestamptz)`,
      );
      const lh = Leasehold.fromEngine(engine);
      // Interleaved across keys, as traffic arrives; ids grow in enqueue order.
      const specs = [];
      for (let seq = 0; seq < PER_KEY; seq++) {
        for (let k = 0; k < KEYS; k++)
          specs.push({ payload: {}, options: { partitionKey: `key-${k}` } });
        if (seq < 10)
          specs.push({
            payload: { fail: true },
            options: { partitionKey: POISON, maxAttempts: 2 },
          });
      }
      await lh.queue('work').enqueueMany(specs);
      const workers = Array.from({ length: 3 }, (_, i) =>
        startScript(FIXTURE, [], {
          DATABASE_URL: ctx.url,
          SCHEMA: ctx.schema,
          CONCURRENCY: '8',
          WORKER_ID: `part-${i}`,
        }),
      );
      try {
        // Per key the jobs run one after another, so a busy machine stretches the whole run: the
        // bound is on a stall (no job settling for a while), not on the run's length.
        const started = performance.now();
        let settled = -1;
        let progressAt = started;
        await waitFor(
          'every job settled',
          async () => {
            const counts = (await engine.jobCounts()).filter((c) => c.queue === 'work');
            const done = counts
              .filter((c) => c.status === 'completed' || c.status === 'dead')
              .reduce((sum, c) => sum + c.count, 0);
            if (done > settled) [settled, progressAt] = [done, performance.now()];
            else if (performance.now() - progressAt > EVENT_TIMEOUT_MS)
              throw new Error(`no job settled for ${EVENT_TIMEOUT_MS} ms (${done} settled)`);
            return counts.every((c) => c.status === 'completed' || c.status === 'dead');
          },
          { timeoutMs: Number.MAX_SAFE_INTEGER, intervalMs: 250 },
        );
        console.log(`# ${settled} jobs settled in ${Math.round(performance.now() - started)} ms`);
      } finally {
        for (const w of workers) w.kill('SIGKILL');
      }
      const { rows } = await engine.pool.query<{
        job_id: string;
        partition_key: string;
        started_at: Date;
        finished_at: Date;
      }>(
        `SELECT job_id, partition_key, started_at, finished_at FROM "${ctx.schema}".effects ORDER BY started_at, job_id`,
      );
      assert.equal(rows.length, KEYS * PER_KEY, 'every healthy job completed exactly once');
      const byKey = new Map<string, typeof rows>();
      for (const row of rows)
        byKey.set(row.partition_key, [...(byKey.get(row.partition_key) ?? []), row]);
      assert.equal(byKey.size, KEYS);
      for (const [key, list] of byKey) {
        const ids = list.map((r) => Number(r.job_id));
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => a - b),
          `${key} ran in enqueue order`,
        );
        for (let i = 1; i < list.length; i++) {
          // started_at comes from JavaScript (whole ms), finished_at from PostgreSQL (µs): allow
          // the truncation, nothing more.
          assert.ok(
            list[i]!.started_at.getTime() + 1 >= list[i - 1]!.finished_at.getTime(),
            `${key}: job ${ids[i]} started before job ${ids[i - 1]} finished`,
          );
        }
      }
      const poison = await engine.jobList({
        queue: 'work',
        partitionKey: POISON,
        limit: 100,
        offset: 0,
      });
      assert.equal(poison.length, 10);
      assert.ok(poison.every((j) => j.status === 'dead' && j.attempts === 2));
    });
  });
});
