/**
 * Burn-down: drain N pre-enqueued no-op jobs through one worker process. leasehold runs in three
 * tuned shapes and with its defaults (at concurrency 1, 10 and 50); graphile-worker in its
 * documented performance configuration and with its defaults (at the same concurrencies);
 * pg-boss in two batch shapes and its defaults. Each ratio names one configuration a side, with
 * the same job retention on both. A run stops at the profile's limit: a default configuration may poll too slowly to
 * drain the backlog in any reasonable time, and its rate is then the rate over the limit.
 */
import type { DrainResult } from '../lib/countdown.js';
import { roundRobin, type BenchSystem, type Family, type FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import { isolatedDrain } from '../lib/isolated-drain.js';
import { graphileDrain } from '../peers/graphile.js';
import { PGBOSS_FAST_SHAPES, PGBOSS_NAMED_SHAPE, pgBossDrain } from '../peers/pgboss.js';
import {
  leaseholdDrain,
  leaseholdPullDrain,
  type BurnDownOptions,
  type PullShape,
} from './queue.js';

/**
 * leasehold's tuned shapes, all measured. Each compared ratio names one of them (below); the
 * sustained-load family sizes its load from the fastest.
 */
export const LEASEHOLD_TUNED: readonly BurnDownOptions[] = [
  { concurrency: 100, maxClaimBatch: 100 },
  { concurrency: 1_000, maxClaimBatch: 500 },
  { concurrency: 1_000, maxClaimBatch: 500, removeOnComplete: true },
];

/**
 * Defaults against defaults at the same concurrency (the only option changed on either side).
 * leasehold's default concurrency is 10 and graphile-worker's is 1, so each side reuses its
 * plain-defaults row at its own default and runs the other two.
 */
const DEFAULTS_AT = [
  {
    key: 'burnDownDefaultsC1VsGraphile',
    concurrency: 1,
    leasehold: 'burnDown.leasehold.default.c1',
    graphile: 'burnDown.graphile.default',
  },
  {
    key: 'burnDownDefaultsC10VsGraphile',
    concurrency: 10,
    leasehold: 'burnDown.leasehold.default',
    graphile: 'burnDown.graphile.default.c10',
  },
  {
    key: 'burnDownDefaultsC50VsGraphile',
    concurrency: 50,
    leasehold: 'burnDown.leasehold.default.c50',
    graphile: 'burnDown.graphile.default.c50',
  },
] as const;
/** The rows each side runs besides its plain defaults. */
const LEASEHOLD_DEFAULTS_AT = [
  { concurrency: 1, id: 'burnDown.leasehold.default.c1' },
  { concurrency: 50, id: 'burnDown.leasehold.default.c50' },
];
const GRAPHILE_DEFAULTS_AT = [
  { concurrency: 10, id: 'burnDown.graphile.default.c10' },
  { concurrency: 50, id: 'burnDown.graphile.default.c50' },
];

export const tunedId = (o: BurnDownOptions): string =>
  `burnDown.leasehold.c${o.concurrency}b${o.maxClaimBatch}${o.removeOnComplete ? '.remove' : ''}${o.metrics ? '.metrics' : ''}${o.telemetry ? '.otel' : ''}`;
const LEASEHOLD_TUNED_IDS = LEASEHOLD_TUNED.map(tunedId);
const pgBossId = (s: { batchSize: number; localConcurrency: number }): string =>
  `burnDown.pgBoss.b${s.batchSize}x${s.localConcurrency}`;
const PGBOSS_FAST_IDS = PGBOSS_FAST_SHAPES.map(pgBossId);
const shapeLabel = (o: BurnDownOptions): string =>
  `concurrency ${o.concurrency} / claim batch ${o.maxClaimBatch}${o.removeOnComplete ? ', removeOnComplete' : ''}${o.metrics ? ', Prometheus metrics on' : ''}${o.telemetry ? ', OpenTelemetry tracing and metrics on' : ''}`;
/**
 * The pull consumer's one shape: two receivers taking 50 each, 100 in flight at most, beside the
 * push worker's tuned shape with the same 100 (concurrency 100, claim batch 100); both keep
 * their completed jobs.
 */
const PULL: PullShape = { loops: 2, max: 50 };
const PULL_ID = 'burnDown.leasehold.pull.l2m50';
/**
 * The pull consumer against graphile-worker, which deletes its finished jobs: like for like, it
 * deletes them at their ack, and takes as many at once as the push worker's deleting shape
 * claims (two receivers × 500, against concurrency 1000 / claim batch 500).
 */
const PULL_DELETING: PullShape = { loops: 2, max: 500, removeOnAck: true };
const PULL_DELETING_ID = 'burnDown.leasehold.pull.l2m500.remove';
const PUSH_FOR_PULL = LEASEHOLD_TUNED[0]!;

/** The configurations each compared ratio names, fixed before the run (no best-of-several). */
const FASTEST_DELETING = LEASEHOLD_TUNED[2]!;
const FASTEST_KEEPING = LEASEHOLD_TUNED[1]!;
/**
 * What observability costs: the fastest keeping shape plain, with the library's metrics observing
 * (decision 0258) and with OpenTelemetry tracing and metrics (decision 0260), each run in a
 * process of its own with a warm-up drain (lib/isolated-drain.ts): run in this process, after
 * the other systems, they measured the code those had left behind as much as their own.
 */
const ISOLATED = [
  { mode: 'plain', id: `${tunedId(FASTEST_KEEPING)}.isolated`, on: '' },
  {
    mode: 'prometheus',
    id: tunedId({ ...FASTEST_KEEPING, metrics: true }),
    on: ', Prometheus metrics on',
  },
  {
    mode: 'full',
    id: tunedId({ ...FASTEST_KEEPING, telemetry: true }),
    on: ', OpenTelemetry tracing and metrics on',
  },
] as const;
const [ISOLATED_PLAIN, WITH_METRICS, WITH_TELEMETRY] = ISOLATED;

function system(
  ctx: FamilyContext,
  id: string,
  label: string,
  drain: (n: number, limitMs: number) => Promise<DrainResult>,
): BenchSystem {
  ctx.results.define({ id, family: 'burn-down', label, unit: 'jobs/s', better: 'higher' });
  const n = ctx.counts.burnDownJobs;
  const limitMs = ctx.counts.burnDownLimitSeconds * 1000;
  return {
    name: label,
    run: async () => {
      const r = await drain(n, limitMs);
      const capped = `capped: ${r.completed} of ${n} in ${ctx.counts.burnDownLimitSeconds} s`;
      ctx.results.add(id, r.rate, r.capped ? capped : undefined);
      return `${formatValue(r.rate, 'jobs/s')} jobs/s${r.capped ? ` (${capped})` : ''}`;
    },
  };
}

export const burnDownFamily: Family = {
  name: 'burn-down',
  title: 'Burn-down',
  about: ({ counts: c }) =>
    `Drain ${c.burnDownJobs.toLocaleString('en-US')} pre-enqueued no-op jobs with one worker process; ` +
    `jobs/s from the worker's start to the last completion. A run stops after ` +
    `${c.burnDownLimitSeconds} s; a capped rate is the rate over that limit.`,
  async run(ctx) {
    const { results } = ctx;
    const url = ctx.db.url;
    const systems: BenchSystem[] = [
      ...LEASEHOLD_TUNED.map((o) =>
        system(ctx, tunedId(o), `leasehold, ${shapeLabel(o)}`, (n, limit) =>
          leaseholdDrain(url, n, o, limit),
        ),
      ),
      ...ISOLATED.map(({ mode, id, on }) =>
        system(
          ctx,
          id,
          `leasehold, ${shapeLabel(FASTEST_KEEPING)}${on}, in a process of its own`,
          (n, limitMs) => isolatedDrain({ url, jobs: n, ...FASTEST_KEEPING, mode, limitMs }),
        ),
      ),
      system(
        ctx,
        PULL_ID,
        `leasehold pull consumer, ${PULL.loops} receivers × receiveMany ${PULL.max}, acks together`,
        (n, limit) => leaseholdPullDrain(url, n, PULL, limit),
      ),
      system(
        ctx,
        PULL_DELETING_ID,
        `leasehold pull consumer, ${PULL_DELETING.loops} receivers × receiveMany ${PULL_DELETING.max}, removeOnAck, acks together`,
        (n, limit) => leaseholdPullDrain(url, n, PULL_DELETING, limit),
      ),
      system(ctx, 'burnDown.leasehold.default', 'leasehold, defaults', (n, limit) =>
        leaseholdDrain(url, n, undefined, limit),
      ),
      ...LEASEHOLD_DEFAULTS_AT.map(({ id, concurrency }) =>
        system(ctx, id, `leasehold, defaults at concurrency ${concurrency}`, (n, limit) =>
          leaseholdDrain(url, n, { defaultsAtConcurrency: concurrency }, limit),
        ),
      ),
      system(ctx, 'burnDown.graphile.fast', 'graphile-worker, performance config', (n, limit) =>
        graphileDrain(url, n, 'fast', limit),
      ),
      system(ctx, 'burnDown.graphile.default', 'graphile-worker, defaults', (n, limit) =>
        graphileDrain(url, n, 'default', limit),
      ),
      ...GRAPHILE_DEFAULTS_AT.map(({ id, concurrency }) =>
        system(ctx, id, `graphile-worker, defaults at concurrency ${concurrency}`, (n, limit) =>
          graphileDrain(url, n, 'default', limit, concurrency),
        ),
      ),
      ...PGBOSS_FAST_SHAPES.map((shape, i) =>
        system(
          ctx,
          PGBOSS_FAST_IDS[i]!,
          `pg-boss, batch ${shape.batchSize} × ${shape.localConcurrency} workers, burst`,
          (n, limit) => pgBossDrain(url, n, shape, limit),
        ),
      ),
      system(ctx, 'burnDown.pgBoss.default', 'pg-boss, defaults', (n, limit) =>
        pgBossDrain(url, n, undefined, limit),
      ),
    ];
    // Like for like, one named configuration a side: graphile-worker deletes a job when it
    // completes, so it meets leasehold's fastest shape with removeOnComplete; pg-boss keeps its
    // completed jobs (until its own retention), so it meets the same shape keeping them.
    results.ratio({
      key: 'burnDownVsGraphile',
      label: `burn-down, both deleting finished jobs: leasehold ${shapeLabel(FASTEST_DELETING)} ÷ graphile-worker, performance config`,
      numerator: tunedId(FASTEST_DELETING),
      denominator: 'burnDown.graphile.fast',
      target: { op: '>=', value: 2 },
    });
    results.ratio({
      key: 'burnDownVsPgBoss',
      label: `burn-down, both keeping finished jobs: leasehold ${shapeLabel(FASTEST_KEEPING)} ÷ pg-boss, batch ${PGBOSS_NAMED_SHAPE.batchSize} × ${PGBOSS_NAMED_SHAPE.localConcurrency} workers`,
      numerator: tunedId(FASTEST_KEEPING),
      denominator: pgBossId(PGBOSS_NAMED_SHAPE),
      target: { op: '>=', value: 2 },
    });
    results.ratio({
      key: 'burnDownMetricsVsPlain',
      label: `burn-down, the library's Prometheus metrics on ÷ off: leasehold ${shapeLabel(FASTEST_KEEPING)}, each in a process of its own`,
      numerator: WITH_METRICS.id,
      denominator: ISOLATED_PLAIN.id,
      target: { op: '>=', value: 0.95 },
    });
    results.ratio({
      key: 'burnDownTelemetryVsPlain',
      label: `burn-down, OpenTelemetry tracing (sampled, batch-exported) and metrics on ÷ off: leasehold ${shapeLabel(FASTEST_KEEPING)}, each in a process of its own`,
      numerator: WITH_TELEMETRY.id,
      denominator: ISOLATED_PLAIN.id,
      target: { op: '>=', value: 0.95 },
    });
    results.ratio({
      key: 'burnDownPullVsPush',
      label: `burn-down, both keeping finished jobs: leasehold pull consumer (${PULL.loops} × receiveMany ${PULL.max}) ÷ leasehold push worker, ${shapeLabel(PUSH_FOR_PULL)}`,
      numerator: PULL_ID,
      denominator: tunedId(PUSH_FOR_PULL),
      target: { op: '>=', value: 0.7 },
    });
    results.ratio({
      key: 'burnDownPullVsGraphile',
      label: `burn-down, both deleting finished jobs: leasehold pull consumer (${PULL_DELETING.loops} × receiveMany ${PULL_DELETING.max}, removeOnAck) ÷ graphile-worker, performance config`,
      numerator: PULL_DELETING_ID,
      denominator: 'burnDown.graphile.fast',
      target: { op: '>=', value: 1.5 },
    });
    for (const { key, concurrency, leasehold, graphile } of DEFAULTS_AT)
      results.ratio({
        key,
        label: `burn-down, defaults at concurrency ${concurrency}: leasehold ÷ graphile-worker`,
        numerator: leasehold,
        denominator: graphile,
        target: { op: '>=', value: 1.5 },
      });
    results.ratio({
      key: 'burnDownDefaultsVsGraphile',
      label:
        'burn-down, each at its own defaults (leasehold concurrency 10, graphile-worker 1): leasehold ÷ graphile-worker',
      numerator: 'burnDown.leasehold.default',
      denominator: 'burnDown.graphile.default',
    });
    results.ratio({
      key: 'burnDownDefaultsVsPgBoss',
      label: 'burn-down, defaults: leasehold ÷ pg-boss',
      numerator: 'burnDown.leasehold.default',
      denominator: 'burnDown.pgBoss.default',
    });
    await roundRobin(ctx, 'burn-down', systems);
    const fastest = fastestTuned(ctx);
    if (fastest) results.figures['burnDownLeaseholdFastest'] = fastest;
  },
};

/** leasehold's faster tuned shape in this run, with its median, if the burn-down ran. */
export function fastestTuned(
  ctx: FamilyContext,
): { options: BurnDownOptions; jobsPerSecond: number } | undefined {
  const best = ctx.results.best(LEASEHOLD_TUNED_IDS);
  if (!best) return undefined;
  const options = LEASEHOLD_TUNED[LEASEHOLD_TUNED_IDS.indexOf(best.id)]!;
  return { options, jobsPerSecond: best.median };
}
