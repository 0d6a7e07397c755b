/**
 * Engine metrics kept in the library: calls, errors by code and a duration histogram per
 * operation, fed by the instrumented engine's events. For programs that want numbers without
 * the HTTP service (`lh.engineMetrics().snapshot()`); the service's /metrics can expose the
 * same snapshot in Prometheus form.
 */
import type { ErrorCode } from '../core/errors.js';
import type { EngineCallEvent, EngineCallName } from './instrumented-engine.js';

/** Upper bounds of the duration buckets, in milliseconds (a last, infinite one is implied). */
export const DEFAULT_DURATION_BUCKETS_MS: readonly number[] = [
  0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000,
];

export interface OperationMetrics {
  readonly operation: EngineCallName;
  readonly calls: number;
  readonly errors: number;
  readonly errorsByCode: Readonly<Partial<Record<ErrorCode, number>>>;
  /** Sum of the durations of every call, in milliseconds. */
  readonly totalMs: number;
  /**
   * Cumulative, like Prometheus: `count` calls took at most `leMs`. The last bucket is
   * `Infinity` and counts every call.
   */
  readonly buckets: readonly { readonly leMs: number; readonly count: number }[];
}

export interface EngineMetricsSnapshot {
  /** The operations called at least once, in name order. */
  readonly operations: readonly OperationMetrics[];
}

interface Tally {
  calls: number;
  errors: number;
  errorsByCode: Partial<Record<ErrorCode, number>>;
  totalMs: number;
  /** Per bucket, not cumulative (cumulated in the snapshot); the last is the infinite one. */
  counts: number[];
}

export class EngineMetrics {
  private readonly tallies = new Map<EngineCallName, Tally>();
  private readonly bounds: readonly number[];

  constructor(bucketsMs: readonly number[] = DEFAULT_DURATION_BUCKETS_MS) {
    this.bounds = [...bucketsMs].sort((a, b) => a - b);
  }

  /** Counts one call: give it to `onCall` of an instrumented engine (or `lh.on('engine', …)`). */
  readonly record = (event: EngineCallEvent): void => {
    let tally = this.tallies.get(event.operation);
    if (!tally) {
      tally = { calls: 0, errors: 0, errorsByCode: {}, totalMs: 0, counts: [] };
      tally.counts = new Array<number>(this.bounds.length + 1).fill(0);
      this.tallies.set(event.operation, tally);
    }
    tally.calls++;
    tally.totalMs += event.durationMs;
    if (event.outcome === 'error') {
      tally.errors++;
      const code = event.errorCode ?? 'internal';
      tally.errorsByCode[code] = (tally.errorsByCode[code] ?? 0) + 1;
    }
    let bucket = 0;
    while (bucket < this.bounds.length && event.durationMs > this.bounds[bucket]!) bucket++;
    tally.counts[bucket]!++;
  };

  /** A copy of the numbers so far. */
  snapshot(): EngineMetricsSnapshot {
    const operations = [...this.tallies.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([operation, tally]): OperationMetrics => {
        let cumulative = 0;
        const buckets = tally.counts.map((count, i) => {
          cumulative += count;
          return { leMs: this.bounds[i] ?? Infinity, count: cumulative };
        });
        return {
          operation,
          calls: tally.calls,
          errors: tally.errors,
          errorsByCode: { ...tally.errorsByCode },
          totalMs: tally.totalMs,
          buckets,
        };
      });
    return { operations };
  }
}
