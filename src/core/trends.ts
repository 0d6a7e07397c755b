/**
 * Per-minute figures of a queue (issue 30, decision 0265): what the elected maintainer records
 * once per cycle into a small rolling table, computed from the jobs themselves, so the figures
 * are the same whichever instance records them. These are the domain types both engines answer.
 */

/** Jobs not finished yet, by status, as sampled while the minute was current. */
export interface TrendDepth {
  readonly waiting: number;
  readonly pending: number;
  readonly processing: number;
}

/** One queue's figures for one minute. */
export interface QueueTrendMinute {
  /** The minute's start (whole UTC minute). */
  readonly minute: Date;
  readonly queue: string;
  /** Jobs that completed in the minute (by `finishedAt`). */
  readonly completed: number;
  /** Failed attempts in the minute that will be retried (a dead job's final failure is `dead`). */
  readonly failed: number;
  /** Jobs that became dead in the minute (by `finishedAt`). */
  readonly dead: number;
  /** Jobs whose latest claim began in the minute, still running or finished since. */
  readonly started: number;
  /** Median of (claimedAt − availableAt) of those starts, in ms; null when none started. */
  readonly pickupP50Ms: number | null;
  /** 99th percentile of the same (interpolated, as percentile_cont), in ms; null when none. */
  readonly pickupP99Ms: number | null;
  /**
   * Waiting, pending and processing jobs when the minute was last recorded while current;
   * null for a minute first recorded after it ended (caught up after a gap): the past depth
   * cannot be read back from the jobs.
   */
  readonly depth: TrendDepth | null;
}

export const MINUTE_MS = 60_000;

/** The start of the minute holding `at`. */
export function minuteOf(at: Date | number): Date {
  const ms = typeof at === 'number' ? at : at.getTime();
  return new Date(Math.floor(ms / MINUTE_MS) * MINUTE_MS);
}

/**
 * The continuous percentile `p` of `values` (linear interpolation between the two nearest
 * ranks), as PostgreSQL's percentile_cont computes it; null for no values. Rounded to the
 * microsecond, as both engines store it.
 */
export function percentileCont(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = p * (sorted.length - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower]!;
  const value = low + (sorted[upper]! - low) * (position - lower);
  return roundToMicros(value);
}

/** A value seen `weight` times (a pickup latency bucket of removed jobs, or one job's own). */
export interface WeightedValue {
  readonly value: number;
  readonly weight: number;
}

/**
 * percentileCont over a multiset given as values with counts: the same interpolation between
 * the two nearest ranks, without expanding the counts (a minute's bucket may hold millions).
 * With every weight 1 it is percentileCont. Rounded to the microsecond.
 */
export function weightedPercentileCont(
  samples: readonly WeightedValue[],
  p: number,
): number | null {
  const sorted = samples.filter((s) => s.weight > 0).sort((a, b) => a.value - b.value);
  const total = sorted.reduce((sum, s) => sum + s.weight, 0);
  if (total === 0) return null;
  const position = p * (total - 1);
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const valueAtRank = (rank: number): number => {
    let seen = 0;
    for (const s of sorted) {
      seen += s.weight;
      if (seen > rank) return s.value;
    }
    return sorted[sorted.length - 1]!.value;
  };
  const low = valueAtRank(lower);
  return roundToMicros(low + (valueAtRank(upper) - low) * (position - lower));
}

/** Milliseconds rounded to 3 decimals (the stored precision of a pickup latency). */
export function roundToMicros(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
