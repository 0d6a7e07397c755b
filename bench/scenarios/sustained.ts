/**
 * Sustained load: enqueue at 80% of leasehold's sustained maximum (measured first: offered the
 * rate of its fastest burn-down in this run, or of one measured here when that family was
 * skipped, the jobs it took in and worked off per second) for the profile's duration while one
 * worker process works, then the pickup latency, the WAL written per job
 * and what the schema carries at the end (dead tuples, total size). graphile-worker in its
 * performance configuration and pg-boss in its named burn-down shape take the same load beside
 * it (issue 25). Latency is compared with both; WAL a job with graphile-worker only, which
 * deletes finished jobs as leasehold's fastest shape does (pg-boss keeps them: its WAL and size
 * are printed, not divided).
 */
import { settle } from '../lib/database.js';
import { roundRobin, type BenchSystem, type Family, type FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import type { SustainedResult } from '../lib/sustained.js';
import { graphileSustained } from '../peers/graphile.js';
import { PGBOSS_NAMED_SHAPE, pgBossSustained } from '../peers/pgboss.js';
import { fastestTuned, LEASEHOLD_TUNED } from './burn-down.js';
import { leaseholdDrain, leaseholdSustained, type BurnDownOptions } from './queue.js';

interface Metric {
  readonly key: string;
  readonly label: string;
  readonly unit: string;
  readonly pick: (r: SustainedResult) => number;
}

const METRICS: readonly Metric[] = [
  { key: 'pickupP50', label: 'pickup p50', unit: 'ms', pick: (r) => r.pickupMs.p50 },
  { key: 'pickupP95', label: 'pickup p95', unit: 'ms', pick: (r) => r.pickupMs.p95 },
  { key: 'pickupP99', label: 'pickup p99', unit: 'ms', pick: (r) => r.pickupMs.p99 },
  { key: 'throughput', label: 'jobs processed/s', unit: 'jobs/s', pick: (r) => r.throughput },
  {
    key: 'walBytesPerJob',
    label: 'WAL bytes per job',
    unit: 'bytes',
    pick: (r) => r.walBytesPerJob,
  },
  { key: 'deadTuples', label: 'dead tuples at the end', unit: 'tuples', pick: (r) => r.deadTuples },
  { key: 'totalBytes', label: 'schema size at the end', unit: 'bytes', pick: (r) => r.totalBytes },
];

function system(
  ctx: FamilyContext,
  key: string,
  label: string,
  measure: () => Promise<SustainedResult>,
): BenchSystem {
  for (const m of METRICS)
    ctx.results.define({
      id: `sustained.${key}.${m.key}`,
      family: 'sustained',
      label: `${label}: ${m.label}`,
      unit: m.unit,
      better: m.key === 'throughput' ? 'higher' : 'lower',
    });
  return {
    name: label,
    run: async () => {
      // Each run starts on a quiet server and disk, whoever ran before it.
      const settled = await settle(ctx.db.url);
      if (settled.vacuumBusy) ctx.progress(`sustained: autovacuum still busy before ${label}`);
      if (!settled.checkpointed) ctx.progress(`sustained: no checkpoint before ${label}`);
      const r = await measure();
      const behind = r.caughtUp ? undefined : `fell behind: ${r.processed} of ${r.sent} processed`;
      for (const m of METRICS)
        ctx.results.add(
          `sustained.${key}.${m.key}`,
          m.pick(r),
          m.key === 'throughput' || m.key === 'walBytesPerJob' ? behind : undefined,
        );
      return (
        `${r.sent} sent, ${r.processed} processed, pickup p50 ${formatValue(r.pickupMs.p50, 'ms')} ms ` +
        `p99 ${formatValue(r.pickupMs.p99, 'ms')} ms, ${Math.round(r.walBytesPerJob)} WAL bytes/job` +
        (behind ? ` (${behind})` : '')
      );
    },
  };
}

/**
 * The ratios against each peer: latency against both; WAL a job against graphile-worker only,
 * which deletes finished jobs as leasehold's fastest shape does (pg-boss keeps them).
 */
const COMPARED = [
  {
    peer: 'graphile',
    label: 'graphile-worker',
    compared: ['pickupP50', 'pickupP99', 'walBytesPerJob'],
  },
  { peer: 'pgBoss', label: 'pg-boss', compared: ['pickupP50', 'pickupP99'] },
] as const;

const metricLabel = (key: string): string => METRICS.find((m) => m.key === key)!.label;
const capitalized = (word: string): string => word[0]!.toUpperCase() + word.slice(1);

/** The share of leasehold's sustained maximum offered as sustained load (issue 25: 80%). */
const LOAD_SHARE = 0.8;

/** leasehold's fastest burn-down in this run, measured now if the burn-down family did not run. */
async function fastestBurnDown(
  ctx: FamilyContext,
): Promise<{ options: BurnDownOptions; rate: number }> {
  const known = fastestTuned(ctx);
  if (known) return { options: known.options, rate: Math.round(known.jobsPerSecond) };
  const options = LEASEHOLD_TUNED[LEASEHOLD_TUNED.length - 1]!;
  const { burnDownJobs, burnDownLimitSeconds } = ctx.counts;
  const drained = await leaseholdDrain(
    ctx.db.url,
    burnDownJobs,
    options,
    burnDownLimitSeconds * 1000,
  );
  ctx.progress(
    `sustained: leasehold's fastest burn-down measured now: ${Math.round(drained.rate)} jobs/s`,
  );
  return { options, rate: Math.round(drained.rate) };
}

/**
 * leasehold's sustained maximum (decision 0273): offered its fastest burn-down's rate for the
 * profile's duration, more than it can take in and work off together (a burn-down drains a
 * backlog with no enqueues beside it), the jobs it processed per second of that window. Its
 * backlog is not waited for. When it did keep up, the offered rate stands, a lower bound.
 */
async function sustainedMaximum(
  ctx: FamilyContext,
  options: BurnDownOptions,
  burnDownRate: number,
): Promise<{ rate: number; keptUp: boolean }> {
  const seconds = ctx.counts.sustainedSeconds;
  const r = await leaseholdSustained(ctx.db.url, options, {
    ratePerSecond: Math.max(1, burnDownRate),
    seconds,
    drainLimitMs: 0,
  });
  const keptUp = r.windowThroughput >= 0.98 * (r.sent / seconds);
  return { rate: Math.round(keptUp ? r.sent / seconds : r.windowThroughput), keptUp };
}

export const sustainedFamily: Family = {
  name: 'sustained',
  title: 'Sustained load',
  about: ({ counts: c }) =>
    `leasehold's sustained maximum first: offered its fastest burn-down's rate for ${c.sustainedSeconds} s, ` +
    `the jobs it processed per second of that window. Then enqueue at ${Math.round(LOAD_SHARE * 100)}% of that maximum for ${c.sustainedSeconds} s (a batch every 10 ms) ` +
    `from a process of its own (each system's own client) while one worker process works ` +
    `(leasehold in its fastest shape, graphile-worker in its performance configuration, ` +
    `pg-boss in batches of ${PGBOSS_NAMED_SHAPE.batchSize} × ${PGBOSS_NAMED_SHAPE.localConcurrency} woken by LISTEN/NOTIFY; ` +
    `pg-boss keeps finished jobs, the other two delete them): pickup = enqueue → handler start; WAL = pg_current_wal_lsn() ` +
    `delta ÷ jobs (it includes the server's background writes); dead tuples and size of the ` +
    `system's schema after its connections closed. Before each run the server settles: ` +
    `autovacuum's workers done (up to 30 s), a checkpoint, and \`sync\`.`,
  async run(ctx) {
    const burnDown = await fastestBurnDown(ctx);
    const { options } = burnDown;
    ctx.results.define({
      id: 'sustained.leasehold.maximum',
      family: 'sustained',
      label: `leasehold: sustained maximum (jobs processed/s while offered its fastest burn-down's rate)`,
      unit: 'jobs/s',
      better: 'higher',
    });
    ctx.progress(
      `sustained: measuring leasehold's sustained maximum (${burnDown.rate} jobs/s offered for ${ctx.counts.sustainedSeconds} s)`,
    );
    const maximum = await sustainedMaximum(ctx, options, burnDown.rate);
    ctx.results.add(
      'sustained.leasehold.maximum',
      maximum.rate,
      maximum.keptUp ? 'kept up with the offered rate: a lower bound' : undefined,
    );
    const rate = Math.round(maximum.rate * LOAD_SHARE);
    const load = {
      ratePerSecond: Math.max(1, rate),
      seconds: ctx.counts.sustainedSeconds,
      // Long enough for a system that fell behind to drain its backlog: its WAL per job counts
      // every job's enqueue but only the processed jobs' claims and deletes, so a backlog left
      // over makes it look cheaper than it is (and its sample says so, below).
      drainLimitMs: Math.max(2_000, ctx.counts.sustainedSeconds * 1_500),
    };
    ctx.results.figures['sustained'] = {
      fastestBurnDown: burnDown.rate,
      maximum: maximum.rate,
      maximumKeptUp: maximum.keptUp,
      ratePerSecond: load.ratePerSecond,
      seconds: load.seconds,
      leaseholdShape: options,
    };
    const url = ctx.db.url;
    const systems = [
      system(
        ctx,
        'leasehold',
        `leasehold (concurrency ${options.concurrency} / batch ${options.maxClaimBatch}${options.removeOnComplete ? ', removeOnComplete' : ''})`,
        () => leaseholdSustained(url, options, load),
      ),
      system(ctx, 'graphile', 'graphile-worker (performance config)', () =>
        graphileSustained(url, load),
      ),
      system(
        ctx,
        'pgBoss',
        `pg-boss (batch ${PGBOSS_NAMED_SHAPE.batchSize} × ${PGBOSS_NAMED_SHAPE.localConcurrency}, LISTEN/NOTIFY)`,
        () => pgBossSustained(url, load),
      ),
    ];
    for (const { peer, label, compared } of COMPARED)
      for (const key of compared)
        ctx.results.ratio({
          key: `sustained${capitalized(key)}Vs${capitalized(peer)}`,
          label: `sustained ${metricLabel(key)}: leasehold ÷ ${label} (lower is better)`,
          numerator: `sustained.leasehold.${key}`,
          denominator: `sustained.${peer}.${key}`,
          ...(key === 'walBytesPerJob' ? { target: { op: '<=', value: 0.7 } as const } : {}),
        });
    ctx.results.check({
      key: 'sustainedPickupP99',
      label: `sustained load at ${Math.round(LOAD_SHARE * 100)}% of leasehold's sustained maximum: leasehold pickup p99 (ms)`,
      measurement: 'sustained.leasehold.pickupP99',
      target: { op: '<=', value: 100 },
    });
    ctx.progress(
      `sustained: maximum ${maximum.rate} jobs/s; ${load.ratePerSecond} jobs/s for ${load.seconds} s per run`,
    );
    await roundRobin(ctx, 'sustained', systems);
  },
};
