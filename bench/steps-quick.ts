/**
 * `npx tsx bench/steps-quick.ts [jobs] [rounds]`: the cost of a workflow step (decision 0254) on
 * the embedded database (default durability) or BENCH_DATABASE_URL. Two burn-downs of jobs that
 * each insert one row, through one worker (concurrency 20), in alternating rounds:
 * - `step`: the insert in `ctx.step` (its own transaction with the step's record), the job then
 *   completed by the worker's batched completion;
 * - `tx`: the insert in the handler's own transaction, completed in it with `ctx.complete(tx)`.
 * The target: step ÷ tx ≥ 0.8. Each round's ratio and the median are printed.
 */
import type pg from 'pg';
import type { PostgresEngine } from '../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../src/leasehold.js';
import { dropSchema, freshSchema, startBenchDatabase } from './lib/database.js';

const jobs = Number(process.argv[2] ?? 2_000);
const rounds = Number(process.argv[3] ?? 5);
const CONCURRENCY = 20;

async function burnDown(url: string, kind: 'step' | 'tx'): Promise<number> {
  const schema = freshSchema(`bench_steps_${kind}`);
  // A step holds a pooled connection while its function runs: one per slot, and a few more.
  const lh = await Leasehold.connect({
    connectionString: url,
    schema,
    migrate: true,
    poolSize: CONCURRENCY + 6,
  });
  try {
    const pool: pg.Pool = (lh.engine as PostgresEngine).pool;
    await pool.query(`CREATE TABLE "${schema}".ledger (job_id bigint PRIMARY KEY)`);
    const insert = `INSERT INTO "${schema}".ledger (job_id) VALUES ($1)`;
    for (let i = 0; i < jobs; i += 1_000)
      await lh
        .queue('steps')
        .enqueueMany(Array.from({ length: Math.min(1_000, jobs - i) }, () => ({ payload: {} })));
    let done = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const worker = lh.worker({
      queues: 'steps',
      concurrency: CONCURRENCY,
      maxClaimBatch: CONCURRENCY,
      handler:
        kind === 'step'
          ? async (job, ctx) => void (await ctx.step('write', (tx) => tx.query(insert, [job.id])))
          : async (job, ctx) => {
              const client = await pool.connect();
              try {
                await client.query('BEGIN');
                await client.query(insert, [job.id]);
                await ctx.complete(client);
                await client.query('COMMIT');
              } catch (error) {
                await client.query('ROLLBACK');
                throw error;
              } finally {
                client.release();
              }
            },
    });
    worker.events.on('job:completed', () => {
      if (++done === jobs) finish();
    });
    const started = performance.now();
    await worker.start();
    await finished;
    const rate = jobs / ((performance.now() - started) / 1_000);
    await worker.stop();
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM "${schema}".ledger`,
    );
    if (rows[0]?.n !== jobs) throw new Error(`${kind}: ${rows[0]?.n} rows for ${jobs} jobs`);
    return rate;
  } finally {
    await lh.close();
    await dropSchema(url, schema);
  }
}

const db = await startBenchDatabase();
console.log(
  `PostgreSQL ${db.settings['server_version']}, fsync=${db.settings['fsync']}, synchronous_commit=${db.settings['synchronous_commit']}; ${jobs} jobs, concurrency ${CONCURRENCY}`,
);
try {
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const tx = await burnDown(db.url, 'tx');
    const step = await burnDown(db.url, 'step');
    ratios.push(step / tx);
    console.log(
      `round ${round}: step ${Math.round(step)} jobs/s, tx ${Math.round(tx)} jobs/s, ratio ${(step / tx).toFixed(2)}`,
    );
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `one-step job ÷ same write completed in its transaction: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} (target ≥ 0.8)`,
  );
} finally {
  await db.stop();
}
