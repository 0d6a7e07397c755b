// Workflows under process faults (issue 28): worker processes SIGKILLed and SIGSTOPped past their
// lease at random while they run three-step jobs and a flow of 1,111 jobs. Afterwards every job
// is completed, each step's ledger row (written through the step's `tx`) exists exactly once and
// was written by the generation that held the job at that instant, the fake external service saw
// every step's key and acted once per key, and every node of the flow ran its step after all its
// children had completed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import type { SchemaContext } from '../support/database.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { waitFor } from '../support/wait.js';
import { IdempotentService } from './fake-service.js';
import { WorkerFleet } from './fault-driver.js';

after(closeTestDatabase);

const LEASE_MS = 1_500;
const WORKERS = 3;

interface LedgerRow {
  job_id: string;
  step: string;
  generation: string;
  seen_generation: string;
  unfinished: number | null;
}

async function setUp(
  ctx: SchemaContext,
): Promise<{ lh: Leasehold; service: IdempotentService; fleet: WorkerFleet }> {
  const engine = await ctx.engine({ poolSize: 4 });
  await engine.pool.query(
    `CREATE TABLE "${ctx.schema}".wf_ledger (job_id bigint NOT NULL, step text NOT NULL,
       generation bigint NOT NULL, seen_generation bigint NOT NULL, unfinished int)`,
  );
  const lh = Leasehold.fromEngine(engine);
  const service = new IdempotentService();
  const url = await service.start();
  const fleet = new WorkerFleet(
    { DATABASE_URL: ctx.url, SCHEMA: ctx.schema, SERVICE_URL: url, LEASE_MS: String(LEASE_MS) },
    LEASE_MS,
  );
  return { lh, service, fleet };
}

/** Runs the fleet under faults until every job of `queue` is completed. */
async function runUnderFaults(
  lh: Leasehold,
  fleet: WorkerFleet,
  queue: string,
  total: number,
  seed: number,
): Promise<void> {
  const maintainer = lh.maintainer({ interval: 200, rescueBackoff: { baseMs: 20, capMs: 200 } });
  maintainer.start();
  try {
    await fleet.start(WORKERS);
    fleet.startFaults(seed);
    // Faults for as long as the work lasts, but at least a few of each kind.
    const completed = async (): Promise<number> =>
      (await lh.engine.jobCounts())
        .filter((c) => c.queue === queue && c.status === 'completed')
        .reduce((n, c) => n + c.count, 0);
    await waitFor(
      'most jobs completed under faults',
      async () =>
        (await completed()) >= total * 0.8 && fleet.faults.kills + fleet.faults.stops >= 10,
      { timeoutMs: 6 * EVENT_TIMEOUT_MS, intervalMs: 500 },
    );
    await fleet.stopFaults();
    await waitFor('every job completed', async () => (await completed()) === total, {
      timeoutMs: 4 * EVENT_TIMEOUT_MS,
      intervalMs: 500,
    });
  } finally {
    await fleet.stopFaults();
    fleet.killAll();
    await maintainer.stop();
  }
}

async function ledger(lh: Leasehold, schema: string): Promise<LedgerRow[]> {
  const engine = lh.engine as unknown as {
    pool: { query(t: string): Promise<{ rows: LedgerRow[] }> };
  };
  return (await engine.pool.query(`SELECT * FROM "${schema}".wf_ledger ORDER BY job_id, step`))
    .rows;
}

describe('workflows under process faults', () => {
  it('200 jobs of three steps: each step applied once, by its valid holder, and each key acted on once', () =>
    withSchema('workflow steps under faults', async (ctx) => {
      const { lh, service, fleet } = await setUp(ctx);
      try {
        const jobs = await lh
          .queue('wf-steps')
          .enqueueMany(Array.from({ length: 200 }, (_, i) => ({ payload: { n: i } })));
        await runUnderFaults(lh, fleet, 'wf-steps', jobs.length, 2801);
        const rows = await ledger(lh, ctx.schema);
        const expected = jobs.flatMap((j) => ['a', 'b', 'c'].map((s) => `${j.id}:${s}`));
        assert.deepEqual(
          rows.map((r) => `${r.job_id}:${r.step}`),
          expected, // jobs in id order, steps in name order, as the ledger is read
          'exactly one ledger row per job and step',
        );
        for (const r of rows)
          assert.equal(
            r.seen_generation,
            r.generation,
            `${r.job_id}:${r.step} written by a stale holder`,
          );
        assert.deepEqual(
          [...service.seen.keys()].sort(),
          [...expected].sort(),
          'every key seen, no other',
        );
        assert.ok(
          [...service.acted.values()].every((n) => n === 1),
          'acted once per key',
        );
        const retried = [...service.seen.values()].filter((n) => n > 1).length;
        const rerun = (
          await lh.engine.jobList({ queue: 'wf-steps', limit: 500, offset: 0 })
        ).filter((j) => j.attempts > 1 || j.generation > 1).length;
        console.log(
          `# 200 jobs x 3 steps: ${fleet.faults.kills} SIGKILLs, ${fleet.faults.stops} SIGSTOPs, ${rerun} jobs run more than once, ${retried} keys called more than once, 600 ledger rows`,
        );
        assert.ok(rerun > 0, 'the faults made some jobs run again (else the test proves nothing)');
      } finally {
        await service.close();
      }
    }));

  it('a flow of depth 3 with 1,000 leaves: every node runs its step once, after all its children', () =>
    withSchema('workflow flow under faults', async (ctx) => {
      const { lh, service, fleet } = await setUp(ctx);
      try {
        const node = (
          children: unknown[],
        ): { queue: string; payload: unknown; children?: unknown[] } =>
          children.length
            ? { queue: 'wf-tree', payload: {}, children }
            : { queue: 'wf-tree', payload: {} };
        const tens = <T>(make: () => T): T[] => Array.from({ length: 10 }, make);
        const flow = await lh.queue('wf-tree').enqueueFlow({
          payload: { root: true },
          children: tens(() => node(tens(() => node(tens(() => node([])))))) as never,
        });
        const total = 1 + 10 + 100 + 1_000;
        const rootId = flow.job.id;
        await runUnderFaults(lh, fleet, 'wf-tree', total, 2802);
        const rows = await ledger(lh, ctx.schema);
        assert.equal(rows.length, total, 'one step row per node');
        assert.equal(new Set(rows.map((r) => r.job_id)).size, total, 'no node ran its step twice');
        for (const r of rows) {
          assert.equal(r.unfinished, 0, `node ${r.job_id} ran before all its children completed`);
          assert.equal(r.seen_generation, r.generation, `node ${r.job_id}: a stale holder's step`);
        }
        const root = await lh.engine.jobGet({ id: rootId });
        assert.equal(root?.status, 'completed');
        assert.deepEqual(root?.result, { children: 10 });
        const rerun = (
          await lh.engine.jobList({ queue: 'wf-tree', limit: 2_000, offset: 0 })
        ).filter((j) => j.attempts > 1 || j.generation > 1).length;
        console.log(
          `# flow of ${total} jobs: ${fleet.faults.kills} SIGKILLs, ${fleet.faults.stops} SIGSTOPs, ${rerun} jobs run more than once`,
        );
      } finally {
        await service.close();
      }
    }));
});
