/**
 * Idle latency: an idle worker taking one job at a time, each system woken by its own
 * LISTEN/NOTIFY (leasehold's default, graphile-worker's default, pg-boss with `notify` on):
 * p50/p95/p99 of the time from the enqueue call to the handler's first line.
 */
import { roundRobin, type BenchSystem, type Family, type FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import type { Percentiles } from '../lib/stats.js';
import { graphileIdleLatency } from '../peers/graphile.js';
import { pgBossIdleLatency } from '../peers/pgboss.js';
import { leaseholdIdleLatency } from './queue.js';

const LEVELS = ['p50', 'p95', 'p99'] as const;
const SYSTEMS = [
  { key: 'leasehold', label: 'leasehold' },
  { key: 'graphile', label: 'graphile-worker' },
  { key: 'pgBoss', label: 'pg-boss' },
] as const;
type SystemKey = (typeof SYSTEMS)[number]['key'];

function system(
  ctx: FamilyContext,
  key: SystemKey,
  label: string,
  measure: () => Promise<Percentiles>,
): BenchSystem {
  for (const level of LEVELS)
    ctx.results.define({
      id: `latency.${key}.${level}`,
      family: 'latency',
      label: `${label} ${level}`,
      unit: 'ms',
      better: 'lower',
    });
  return {
    name: label,
    run: async () => {
      const p = await measure();
      for (const level of LEVELS) ctx.results.add(`latency.${key}.${level}`, p[level]);
      return LEVELS.map((l) => `${l} ${formatValue(p[l], 'ms')} ms`).join(', ');
    },
  };
}

export const latencyFamily: Family = {
  name: 'latency',
  title: 'Idle latency',
  about: ({ counts: c }) =>
    `An idle worker, one job at a time (${c.latencySamples} jobs per round, 20 ms apart): ` +
    `ms from the enqueue call to the handler's first line, woken by LISTEN/NOTIFY.`,
  async run(ctx) {
    const url = ctx.db.url;
    const n = ctx.counts.latencySamples;
    const measures: Record<SystemKey, () => Promise<Percentiles>> = {
      leasehold: () => leaseholdIdleLatency(url, n, true),
      graphile: () => graphileIdleLatency(url, n),
      pgBoss: () => pgBossIdleLatency(url, n),
    };
    const systems = SYSTEMS.map((s) => system(ctx, s.key, s.label, measures[s.key]));
    for (const level of ['p50', 'p99'] as const)
      for (const [peer, name, target] of [
        ['graphile', 'Graphile', true],
        ['pgBoss', 'PgBoss', false],
      ] as const)
        ctx.results.ratio({
          key: `latency${level.toUpperCase()}Vs${name}`,
          label: `idle latency ${level}: leasehold ÷ ${peer === 'graphile' ? 'graphile-worker' : 'pg-boss'} (lower is better)`,
          numerator: `latency.leasehold.${level}`,
          denominator: `latency.${peer}.${level}`,
          ...(target ? { target: { op: '<=', value: 1 } as const } : {}),
        });
    await roundRobin(ctx, 'latency', systems);
    ctx.results.figures['idleLatencyMs'] = Object.fromEntries(
      SYSTEMS.map((s) => [
        s.key,
        Object.fromEntries(
          LEVELS.map((l) => [l, ctx.results.summary(`latency.${s.key}.${l}`) ?? null]),
        ),
      ]),
    );
  },
};
