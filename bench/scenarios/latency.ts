/**
 * Idle latency: an idle worker taking one job at a time, each system woken by its own
 * LISTEN/NOTIFY (leasehold's default, graphile-worker's default, pg-boss with `notify` on):
 * p50/p95/p99 of the time from the enqueue call to the handler's first line. The systems idle
 * side by side and are sampled in turn (idle-latency.ts, decision 0214); each round sets them
 * up in an order one further along.
 */
import type { Family } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import { interleavedIdleLatency, type IdleSetup } from '../lib/idle-latency.js';
import { graphileIdleSetup } from '../peers/graphile.js';
import { pgBossIdleSetup } from '../peers/pgboss.js';
import { leaseholdIdleSetup } from './queue.js';

const LEVELS = ['p50', 'p95', 'p99'] as const;
const SYSTEMS = [
  { key: 'leasehold', label: 'leasehold' },
  { key: 'graphile', label: 'graphile-worker' },
  { key: 'pgBoss', label: 'pg-boss' },
] as const;
type SystemKey = (typeof SYSTEMS)[number]['key'];

export const latencyFamily: Family = {
  name: 'latency',
  title: 'Idle latency',
  about: ({ counts: c }) =>
    `An idle worker per system, one job at a time (${c.latencySamples} jobs per system and ` +
    `round, the systems sampled in turn, 20 ms apart): ms from the enqueue call to the ` +
    `handler's first line, woken by LISTEN/NOTIFY.`,
  async run(ctx) {
    const url = ctx.db.url;
    const setups: Record<SystemKey, IdleSetup> = {
      leasehold: leaseholdIdleSetup(url, true),
      graphile: graphileIdleSetup(url),
      pgBoss: pgBossIdleSetup(url),
    };
    for (const { key, label } of SYSTEMS)
      for (const level of LEVELS)
        ctx.results.define({
          id: `latency.${key}.${level}`,
          family: 'latency',
          label: `${label} ${level}`,
          unit: 'ms',
          better: 'lower',
        });
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
          // Issue 25: the p50 at most graphile-worker's, the p99 at most 0.8 of it.
          ...(target ? { target: { op: '<=', value: level === 'p99' ? 0.8 : 1 } as const } : {}),
        });
    for (let round = 0; round < ctx.repeat; round++) {
      const order = SYSTEMS.map((_, k) => SYSTEMS[(k + round) % SYSTEMS.length]!);
      const started = performance.now();
      const measured = await interleavedIdleLatency(
        order.map((s) => setups[s.key]),
        ctx.counts.latencySamples,
      );
      const lines = order.map(({ key, label }, k) => {
        const p = measured[k]!;
        for (const level of LEVELS) ctx.results.add(`latency.${key}.${level}`, p[level]);
        return `${label} ${LEVELS.map((l) => `${l} ${formatValue(p[l], 'ms')}`).join(' ')} ms`;
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      ctx.progress(
        `latency [round ${round + 1}/${ctx.repeat}]: ${lines.join('; ')} (${seconds} s)`,
      );
    }
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
