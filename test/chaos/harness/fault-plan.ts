/**
 * The seeded fault schedule of a run. The same seed, duration and fleet give the same plan: which
 * fault, on which process, at which offset, for how long. The first faults go through every
 * enabled type once in a seeded order, so even a short run covers them all; after that each
 * fault is drawn by weight. Faults run one at a time, so each has a clean window.
 */
import type { FaultType } from '../history.js';
import type { Random } from '../random.js';

export interface PlannedFault {
  /** Offset from the start of the faulty phase. */
  atMs: number;
  type: FaultType;
  /** The process hit, or null for the database or the HA cluster (pg-*, failover, …). */
  target: string | null;
  /** How long it lasts (SIGSTOP, stall, blackhole, latency); 0 for instant faults. */
  durationMs: number;
  /** Added latency per chunk, for proxy-latency. */
  latencyMs?: number;
  /** standby-lag: the primary is killed while replication is held back (a failover follows). */
  thenFailover?: boolean;
}

export interface PlanOptions {
  durationMs: number;
  types: readonly FaultType[];
  targets: readonly string[];
  /** Quiet time between two faults, drawn in [min, max]. */
  gapMs: readonly [number, number];
  /** How long a freeze lasts: past the ttl of the longest lease, so terms really expire. */
  freezeMs: readonly [number, number];
  weights?: Partial<Record<FaultType, number>>;
  /** Added latency per chunk for proxy-latency, drawn in [min, max]; default [100, 800]. */
  latencyMs?: readonly [number, number];
  /** Share of standby-lag faults that end in a failover (default 0.5). */
  lagFailoverChance?: number;
}

const DEFAULT_WEIGHTS: Record<FaultType, number> = {
  sigkill: 3,
  sigstop: 3,
  stall: 2,
  'terminate-backend': 2,
  'proxy-blackhole': 2,
  'proxy-latency': 2,
  'proxy-reset': 2,
  'pg-restart': 1,
  'pg-crash': 1,
  // Failover mode: each takes a promotion, a rejoin and the quarantine (tens of seconds), so
  // they come about as often as the process faults in time, not in count.
  failover: 2,
  switchover: 1,
  'standby-lag': 2,
};

/** Faults on the database or the cluster itself rather than on one process. */
const DATABASE_FAULTS: ReadonlySet<FaultType> = new Set([
  'pg-restart',
  'pg-crash',
  'failover',
  'switchover',
  'standby-lag',
]);

export function planFaults(random: Random, options: PlanOptions): PlannedFault[] {
  const plan: PlannedFault[] = [];
  const firstRound = [...options.types];
  for (let i = firstRound.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [firstRound[i], firstRound[j]] = [firstRound[j]!, firstRound[i]!];
  }
  const weights = Object.fromEntries(
    options.types.map((t) => [t, options.weights?.[t] ?? DEFAULT_WEIGHTS[t]]),
  ) as Record<FaultType, number>;
  let at = random.between(options.gapMs[0], options.gapMs[1]) / 2;
  while (at < options.durationMs) {
    const type = firstRound.shift() ?? random.weighted(weights);
    const fault = describe(random, type, options);
    plan.push({ atMs: Math.round(at), ...fault });
    at += fault.durationMs + random.between(options.gapMs[0], options.gapMs[1]);
  }
  return plan;
}

function describe(
  random: Random,
  type: FaultType,
  options: PlanOptions,
): Omit<PlannedFault, 'atMs'> {
  const target = DATABASE_FAULTS.has(type) ? null : random.pick(options.targets);
  const [freezeMin, freezeMax] = options.freezeMs;
  switch (type) {
    case 'sigstop':
    case 'stall':
      return { type, target, durationMs: Math.round(random.between(freezeMin, freezeMax)) };
    case 'proxy-blackhole':
      return { type, target, durationMs: Math.round(random.between(freezeMin, freezeMax)) };
    case 'proxy-latency':
      return {
        type,
        target,
        durationMs: Math.round(random.between(1_500, 4_000)),
        latencyMs: random.int(...(options.latencyMs ?? [100, 800])),
      };
    case 'standby-lag':
      // Held back 2-6 s (thousands of commits at chaos volume); half the time the primary is
      // killed before replication catches up, which under asynchronous replication loses what
      // was acknowledged meanwhile.
      return {
        type,
        target,
        durationMs: Math.round(random.between(2_000, 6_000)),
        thenFailover: random.chance(options.lagFailoverChance ?? 0.5),
      };
    default:
      return { type, target, durationMs: 0 };
  }
}
