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

/** Milliseconds rounded to 3 decimals (the stored precision of a pickup latency). */
export function roundToMicros(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
