/**
 * The console's charts from the per-minute rows (decision 0265): a window of the last hour
 * (one point a minute, 60 points) or day (one point per 5 minutes, 288 points), every point
 * present (a minute without a row is a minute without work), summed over queues unless one
 * is asked for.
 *
 * Points of several minutes or queues combine as follows: counts add up; the median pickup
 * latency is the mean of the medians weighted by starts (an approximation: medians do not
 * combine exactly); the p99 is the largest p99 (an upper bound); the depth is each queue's
 * latest sampled depth in the point, added up, or null when none was sampled.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { MINUTE_MS, minuteOf, type QueueTrendMinute, type TrendDepth } from '../core/trends.js';
import { requireName, requireOneOf } from '../core/validate.js';

export const TREND_WINDOWS = ['1h', '1d'] as const;
export type TrendWindow = (typeof TREND_WINDOWS)[number];

/** Each window's length and step, in minutes: at most 300 points either way. */
export const TREND_WINDOW_SPECS: Readonly<
  Record<TrendWindow, { minutes: number; stepMinutes: number }>
> = {
  '1h': { minutes: 60, stepMinutes: 1 },
  '1d': { minutes: 1440, stepMinutes: 5 },
};

export interface TrendsOptions {
  /** `1h` (default) or `1d`. */
  window?: TrendWindow;
  /** One queue's figures; all queues summed when left out. */
  queue?: string;
}

/** One point of a series: the figures of `stepMinutes` minutes from `at`. */
export interface TrendPoint {
  readonly at: Date;
  readonly completed: number;
  readonly failed: number;
  readonly dead: number;
  readonly started: number;
  /** (failed + dead) / (completed + failed + dead); null when no attempt ended. */
  readonly failureRate: number | null;
  readonly pickupP50Ms: number | null;
  readonly pickupP99Ms: number | null;
  readonly depth: TrendDepth | null;
}

export interface TrendSeries {
  readonly window: TrendWindow;
  readonly queue: string | null;
  readonly stepMinutes: number;
  /** The first point's start; `to` is the end of the minute under way. */
  readonly from: Date;
  readonly to: Date;
  readonly points: readonly TrendPoint[];
  /** Each queue's newest recorded minute in the window (of the one queue when asked), by name. */
  readonly latest: readonly QueueTrendMinute[];
}

/** Validated trends options (typed errors naming the field). */
export function resolveTrendsOptions(options: TrendsOptions): {
  window: TrendWindow;
  queue: string | undefined;
} {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object');
  return {
    window: requireOneOf('window', options.window ?? '1h', TREND_WINDOWS),
    queue: options.queue === undefined ? undefined : requireName('queue', options.queue),
  };
}

/** The minutes a window covers when the engine's clock reads `now`: [from, to). */
export function trendRange(window: TrendWindow, now: Date): { from: Date; to: Date } {
  const to = minuteOf(now).getTime() + MINUTE_MS;
  return { from: new Date(to - TREND_WINDOW_SPECS[window].minutes * MINUTE_MS), to: new Date(to) };
}

export function trendSeries(
  window: TrendWindow,
  queue: string | null,
  range: { from: Date; to: Date },
  rows: readonly QueueTrendMinute[],
): TrendSeries {
  const { stepMinutes } = TREND_WINDOW_SPECS[window];
  const stepMs = stepMinutes * MINUTE_MS;
  const from = range.from.getTime();
  const count = Math.ceil((range.to.getTime() - from) / stepMs);
  const buckets: QueueTrendMinute[][] = Array.from({ length: count }, () => []);
  const latest = new Map<string, QueueTrendMinute>();
  for (const row of rows) {
    const index = Math.floor((row.minute.getTime() - from) / stepMs);
    if (index < 0 || index >= count) continue;
    buckets[index]!.push(row);
    const seen = latest.get(row.queue);
    if (!seen || seen.minute.getTime() < row.minute.getTime()) latest.set(row.queue, row);
  }
  return {
    window,
    queue,
    stepMinutes,
    from: range.from,
    to: range.to,
    points: buckets.map((bucket, i) => combine(new Date(from + i * stepMs), bucket)),
    latest: [...latest.values()].sort((a, b) =>
      a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0,
    ),
  };
}

/** One point from the rows (any minutes, any queues) it covers. */
export function combine(at: Date, rows: readonly QueueTrendMinute[]): TrendPoint {
  let completed = 0;
  let failed = 0;
  let dead = 0;
  let started = 0;
  let weightedP50 = 0;
  let p99: number | null = null;
  const depthByQueue = new Map<string, { minute: number; depth: TrendDepth }>();
  for (const row of rows) {
    completed += row.completed;
    failed += row.failed;
    dead += row.dead;
    started += row.started;
    if (row.pickupP50Ms !== null) weightedP50 += row.pickupP50Ms * row.started;
    if (row.pickupP99Ms !== null) p99 = Math.max(p99 ?? 0, row.pickupP99Ms);
    const seen = depthByQueue.get(row.queue);
    if (row.depth && (!seen || seen.minute < row.minute.getTime()))
      depthByQueue.set(row.queue, { minute: row.minute.getTime(), depth: row.depth });
  }
  const ended = completed + failed + dead;
  const depths = [...depthByQueue.values()].map((d) => d.depth);
  const depth: TrendDepth | null =
    depths.length === 0
      ? null
      : {
          waiting: depths.reduce((n, d) => n + d.waiting, 0),
          pending: depths.reduce((n, d) => n + d.pending, 0),
          processing: depths.reduce((n, d) => n + d.processing, 0),
        };
  return {
    at,
    completed,
    failed,
    dead,
    started,
    failureRate: ended === 0 ? null : (failed + dead) / ended,
    pickupP50Ms: started === 0 ? null : Math.round((weightedP50 / started) * 1000) / 1000,
    pickupP99Ms: p99,
    depth,
  };
}
