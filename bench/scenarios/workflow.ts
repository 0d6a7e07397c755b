/**
 * Workflows (issue 28): what a step costs. Burn-downs of N jobs that each make one database
 * write in a transaction, with the same worker shape on both sides:
 *
 * - one step: the handler runs `ctx.step('write', (tx) => insert)`: the step's transaction
 *   holds the write and the step's record; the job then completes through the worker's batched
 *   outcomes, as any job does.
 * - complete in the transaction: the handler opens its own transaction, makes the same insert
 *   and completes the job with `ctx.complete(tx)` before its COMMIT (the fastest way to tie a
 *   write to a job's completion without steps).
 *
 * The ratio is one step ÷ complete in the transaction (target ≥ 0.8: a step costs at most one
 * extra round trip, the lazy read of the job's recorded steps). Jobs are kept on completion on
 * both sides. Each side runs once a round, round-robin, each on a fresh schema.
 */
import type pg from 'pg';
import { Leasehold } from '../../src/leasehold.js';
import { Countdown, type DrainResult } from '../lib/countdown.js';
import { dropSchema, freshSchema } from '../lib/database.js';
import { roundRobin, type BenchSystem, type Family, type FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';

const QUEUE = 'bench-steps';
const CONCURRENCY = 20;
const POOL = 24;
/** A step's transaction is a few commits: a fifth of the burn-down's jobs keeps a round short. */
const JOBS_SHARE = 0.25;

const SHAPE = `one worker, concurrency ${CONCURRENCY}, pool ${POOL}, jobs kept`;

const ID = {
  step: 'workflow.oneStep',
  completeInTx: 'workflow.completeInTransaction',
} as const;

type Side = 'step' | 'completeInTx';

function drain(url: string, n: number, limitMs: number, side: Side): Promise<DrainResult> {
  return withSchema(url, async (lh, schema) => {
    const s = `"${schema}"`;
    const pool = (lh.engine as unknown as { pool: pg.Pool }).pool;
    await pool.query(`CREATE TABLE ${s}.bench_ledger (job_id bigint NOT NULL, note text NOT NULL)`);
    const insert = `INSERT INTO ${s}.bench_ledger (job_id, note) VALUES ($1, $2)`;
    for (let i = 0; i < n; i += 5_000)
      await lh
        .queue(QUEUE)
        .enqueueMany(Array.from({ length: Math.min(5_000, n - i) }, () => ({ payload: {} })));
    const countdown = new Countdown(n);
    const worker = lh.worker({
      queues: QUEUE,
      concurrency: CONCURRENCY,
      handler:
        side === 'step'
          ? async (job, ctx) => {
              await ctx.step('write', async (tx) => {
                await tx.query(insert, [job.id, 'step']);
              });
            }
          : async (job, ctx) => {
              const client = await pool.connect();
              try {
                await client.query('BEGIN');
                await client.query(insert, [job.id, 'tx']);
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
    worker.events.on('job:completed', () => countdown.add());
    await worker.start();
    const result = await countdown.wait(limitMs);
    await worker.stop();
    return result;
  });
}

async function withSchema<T>(
  url: string,
  fn: (lh: Leasehold, schema: string) => Promise<T>,
): Promise<T> {
  const schema = freshSchema('bench_lh_steps');
  const lh = await Leasehold.connect({
    connectionString: url,
    schema,
    migrate: true,
    poolSize: POOL,
  });
  try {
    return await fn(lh, schema);
  } finally {
    await lh.close();
    await dropSchema(url, schema);
  }
}

function burnDown(ctx: FamilyContext, id: string, label: string, side: Side): BenchSystem {
  ctx.results.define({ id, family: 'workflow', label, unit: 'jobs/s', better: 'higher' });
  const n = Math.max(100, Math.round(ctx.counts.burnDownJobs * JOBS_SHARE));
  const limitMs = ctx.counts.burnDownLimitSeconds * 1000;
  return {
    name: label,
    run: async () => {
      const r = await drain(ctx.db.url, n, limitMs, side);
      const capped = `capped: ${r.completed} of ${n} in ${ctx.counts.burnDownLimitSeconds} s`;
      ctx.results.add(id, r.rate, r.capped ? capped : undefined);
      return `${formatValue(r.rate, 'jobs/s')} jobs/s${r.capped ? ` (${capped})` : ''}`;
    },
  };
}

export const workflowFamily: Family = {
  name: 'workflow',
  title: 'Workflow steps',
  about: ({ counts: c }) =>
    `Burn-downs of ${Math.max(100, Math.round(c.burnDownJobs * JOBS_SHARE)).toLocaleString('en-US')} ` +
    `pre-enqueued jobs, each making one insert in a transaction, ${SHAPE}: in one ` +
    '`ctx.step` (the step recorded in the same transaction, the job completed by the worker ' +
    'afterwards), or in the handler’s own transaction completed with `ctx.complete(tx)`. A run ' +
    `stops after ${c.burnDownLimitSeconds} s.`,
  async run(ctx) {
    const systems = [
      burnDown(ctx, ID.step, 'one step (`ctx.step`)', 'step'),
      burnDown(
        ctx,
        ID.completeInTx,
        'the same write, completed with `ctx.complete(tx)`',
        'completeInTx',
      ),
    ];
    ctx.results.ratio({
      key: 'stepVsCompleteInTransaction',
      label: `workflow, ${SHAPE}: a one-step job ÷ a job completing in its own transaction`,
      numerator: ID.step,
      denominator: ID.completeInTx,
      target: { op: '>=', value: 0.8 },
    });
    await roundRobin(ctx, 'workflow', systems);
  },
};
