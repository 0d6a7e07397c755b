/**
 * Idle herd: 50 idle leasehold worker processes, each running one worker with its defaults
 * (the shape of a deployment: one worker with its concurrency per process), on one empty
 * queue; how many statements they cost the database per second, per worker process (and per
 * worker, which differs only when a profile puts several workers in a process). The processes
 * start once; each round is one counting window.
 */
import { Leasehold } from '../../src/leasehold.js';
import { startChild, type BenchChild } from '../lib/child.js';
import { adminQuery, dropSchema, freshSchema } from '../lib/database.js';
import type { Family, FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import { openQueryCounter, type QueryWindow } from '../lib/query-counter.js';
import { sleep } from '../lib/stats.js';

const PER_PROCESS = 'herd.perProcess';
const PER_WORKER = 'herd.perWorker';
const CONNECTIONS = 'herd.connectionsPerProcess';

/**
 * Connections the herd holds open, per process: leasehold names its pool `leasehold` and its
 * listener `leasehold-listener` (application_name), and only the herd runs leasehold now.
 */
async function connectionsPerProcess(url: string, processes: number): Promise<number> {
  const [row] = await adminQuery<{ n: string }>(
    url,
    `SELECT count(*)::text AS n FROM pg_stat_activity WHERE application_name LIKE 'leasehold%'`,
  );
  return Number(row?.n ?? 0) / processes;
}

/** `workers` spread as evenly as possible over `processes`. */
function split(workers: number, processes: number): number[] {
  return Array.from(
    { length: processes },
    (_, i) => Math.floor(workers / processes) + (i < workers % processes ? 1 : 0),
  ).filter((n) => n > 0);
}

async function startHerd(url: string, schema: string, shares: number[]): Promise<BenchChild[]> {
  const children = shares.map((n) => startChild('bench/herd-child.ts', [url, schema, String(n)]));
  try {
    await Promise.all(children.map((c) => c.waitForLine(/^ready$/, 60_000)));
    return children;
  } catch (error) {
    await Promise.all(children.map((c) => c.stop()));
    throw error;
  }
}

export const herdFamily: Family = {
  name: 'herd',
  title: 'Idle herd',
  about: ({ counts: c, db }) =>
    `${c.herdWorkers} idle leasehold workers with their defaults (poll every 2 s, ` +
    `heartbeat every 5 s) in ${c.herdProcesses} child processes (${c.herdWorkers === c.herdProcesses ? 'one worker each, as deployed' : 'several workers each'}) on one empty queue: ` +
    `statements per second over ${c.herdWindowSeconds} s per round, counted with ` +
    `${db.statementStats ? 'pg_stat_statements' : "pg_stat_database's transactions"}, ` +
    `divided by the number of processes (and of workers).`,
  async run(ctx: FamilyContext) {
    const { counts, results } = ctx;
    const url = ctx.db.url;
    results.define({
      id: PER_PROCESS,
      family: 'herd',
      label: 'queries/s per worker process',
      unit: 'queries/s',
      better: 'lower',
    });
    results.define({
      id: PER_WORKER,
      family: 'herd',
      label: 'queries/s per idle worker',
      unit: 'queries/s',
      better: 'lower',
    });
    results.define({
      id: CONNECTIONS,
      family: 'herd',
      label: 'connections per worker process (pool + listener)',
      unit: 'connections',
      better: 'lower',
    });
    results.check({
      key: 'herdQueriesPerProcess',
      label: 'idle herd: queries/s per idle worker process',
      measurement: PER_PROCESS,
      target: { op: '<=', value: 1 },
    });
    const schema = freshSchema('bench_lh_herd');
    const setup = await Leasehold.connect({
      connectionString: url,
      schema,
      migrate: true,
      poolSize: 1,
    });
    await setup.close();
    const shares = split(counts.herdWorkers, counts.herdProcesses);
    const workers = shares.reduce((a, b) => a + b, 0);
    const counter = await openQueryCounter(url, ctx.db.statementStats);
    let children: BenchChild[] = [];
    try {
      children = await startHerd(url, schema, shares);
      await sleep(counts.herdSettleSeconds * 1000);
      let last: QueryWindow | undefined;
      for (let round = 0; round < ctx.repeat; round++) {
        const started = performance.now();
        const window = await counter.measure(() => sleep(counts.herdWindowSeconds * 1000));
        const perSecond = window.queries / ((performance.now() - started) / 1000);
        results.add(PER_PROCESS, perSecond / children.length);
        results.add(PER_WORKER, perSecond / workers);
        results.add(CONNECTIONS, await connectionsPerProcess(url, children.length));
        ctx.progress(
          `herd [round ${round + 1}/${ctx.repeat}]: ${window.queries} statements in ${counts.herdWindowSeconds} s, ` +
            `${formatValue(perSecond / children.length, 'queries/s')} per process`,
        );
        last = window;
      }
      results.figures['herd'] = {
        method: counter.method,
        workers,
        processes: children.length,
        windowSeconds: counts.herdWindowSeconds,
        queriesPerSecondPerProcess: results.summary(PER_PROCESS) ?? null,
        queriesPerSecondPerWorker: results.summary(PER_WORKER) ?? null,
        connectionsPerProcess: results.summary(CONNECTIONS) ?? null,
        busiestStatementsLastWindow: last?.top ?? [],
      };
    } finally {
      await Promise.all(children.map((c) => c.stop()));
      await counter.close();
      await dropSchema(url, schema);
    }
  },
};
