/**
 * Idle herd: 50 idle leasehold worker processes, each running one worker with its defaults
 * (the shape of a deployment: one worker with its concurrency per process), on one empty
 * queue; how many statements they cost the database per second, per worker process (and per
 * worker, which differs only when a profile puts several workers in a process). The processes
 * start once; each round is one counting window without queue settings and one with the
 * queue's limits configured (issue 26: workers of a limited queue claim with the longer
 * statement), the order alternating by round so neither always comes first.
 */
import { Leasehold } from '../../src/leasehold.js';
import type { QueueConfiguration } from '../../src/queue/queue-settings.js';
import { startChild, type BenchChild } from '../lib/child.js';
import { adminQuery, dropSchema, freshSchema } from '../lib/database.js';
import type { Family, FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import { openQueryCounter, type QueryWindow } from '../lib/query-counter.js';
import { sleep } from '../lib/stats.js';

const PER_PROCESS = 'herd.perProcess';
const PER_WORKER = 'herd.perWorker';
const CONNECTIONS = 'herd.connectionsPerProcess';
const LIMITED_PER_PROCESS = 'herd.limited.perProcess';

/** The herd queue's settings in the limited windows: docs/queue.md's example, every limit. */
const LIMITS = { concurrency: 20, perKeyConcurrency: 2, rate: { limit: 100, per: '1s' } };
const LIMITS_LABEL = 'concurrency 20, perKeyConcurrency 2, rate 100 per 1 s';
/** Back to the defaults: the settings row is dropped, the workers return to the plain claim. */
const NO_LIMITS = { concurrency: null, perKeyConcurrency: 1, rate: null };

/** Sets the herd queue's settings from a connection of its own, closed before counting. */
async function configureHerd(url: string, schema: string, settings: QueueConfiguration) {
  const lh = await Leasehold.connect({ connectionString: url, schema, poolSize: 1 });
  try {
    await lh.queue('herd').configure(settings);
  } finally {
    await lh.close();
  }
}

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
    `divided by the number of processes (and of workers). Each round also counts a window ` +
    `with the queue configured (${LIMITS_LABEL}), the order alternating by round.`,
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
    results.define({
      id: LIMITED_PER_PROCESS,
      family: 'herd',
      label: `queries/s per worker process, queue limited (${LIMITS_LABEL})`,
      unit: 'queries/s',
      better: 'lower',
    });
    results.check({
      key: 'herdQueriesPerProcess',
      label: 'idle herd: queries/s per idle worker process',
      measurement: PER_PROCESS,
      target: { op: '<=', value: 1 },
    });
    results.check({
      key: 'herdLimitedQueriesPerProcess',
      label: `idle herd, queue limited (${LIMITS_LABEL}): queries/s per idle worker process`,
      measurement: LIMITED_PER_PROCESS,
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
      let lastLimited: QueryWindow | undefined;
      let limited = false;
      for (let round = 0; round < ctx.repeat; round++) {
        for (const variant of round % 2 === 0 ? [false, true] : [true, false]) {
          if (variant !== limited) {
            await configureHerd(url, schema, variant ? LIMITS : NO_LIMITS);
            limited = variant;
            // The change notifies every worker, which claims at once: not counted.
            await sleep(counts.herdSettleSeconds * 1000);
          }
          const started = performance.now();
          const window = await counter.measure(() => sleep(counts.herdWindowSeconds * 1000));
          const perSecond = window.queries / ((performance.now() - started) / 1000);
          if (variant) {
            results.add(LIMITED_PER_PROCESS, perSecond / children.length);
            lastLimited = window;
          } else {
            results.add(PER_PROCESS, perSecond / children.length);
            results.add(PER_WORKER, perSecond / workers);
            results.add(CONNECTIONS, await connectionsPerProcess(url, children.length));
            last = window;
          }
          ctx.progress(
            `herd [round ${round + 1}/${ctx.repeat}]${variant ? ' limited' : ''}: ${window.queries} statements in ${counts.herdWindowSeconds} s, ` +
              `${formatValue(perSecond / children.length, 'queries/s')} per process`,
          );
        }
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
        limited: {
          settings: LIMITS,
          queriesPerSecondPerProcess: results.summary(LIMITED_PER_PROCESS) ?? null,
          busiestStatementsLastWindow: lastLimited?.top ?? [],
        },
      };
    } finally {
      await Promise.all(children.map((c) => c.stop()));
      await counter.close();
      await dropSchema(url, schema);
    }
  },
};
