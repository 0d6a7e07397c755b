/**
 * `lh.queue(name).configure(...)`: what a caller may set, checked before anything is written
 * (bad input changes nothing). The bounds are the `queues` table's CHECKs, so an input the
 * database would refuse is refused here first, with the field named.
 */
import type { Duration } from '../core/duration.js';
import { toMilliseconds, typeName } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { QUEUE_FAIRNESS, type QueueFairness } from '../core/types.js';
import { requireOneOf, requireSafeInteger } from '../core/validate.js';
import type { QueueSettingsChange } from '../engine/queues.js';

export const QUEUE_SETTINGS_LIMITS = {
  concurrencyMax: 10_000,
  perKeyConcurrencyMax: 1_000,
  /** The rate's window keeps one instant per start, so the limit bounds its size. */
  rateLimitMax: 10_000,
  ratePerMinMs: 10,
  ratePerMaxMs: 24 * 60 * 60 * 1000,
} as const;

export interface QueueConfiguration {
  /** Jobs of the queue in flight across every worker and process; `null` removes the cap. */
  concurrency?: number | null;
  /** Jobs in flight per partition key (default 1, which keeps each key's order); `null`: no cap. */
  perKeyConcurrency?: number | null;
  /** At most `limit` jobs start in any window of `per` (a sliding window); `null` removes it. */
  rate?: { limit: number; per: Duration } | null;
  /** `key`: round-robin across partition keys; `oldest` (the default): oldest first. */
  fairness?: QueueFairness;
}

const KNOWN = new Set(['concurrency', 'perKeyConcurrency', 'rate', 'fairness']);

export function toSettingsChange(input: unknown): QueueSettingsChange {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new InvalidArgumentError('settings', `must be an object, got ${typeName(input)}`);
  const o = input as Record<string, unknown>;
  for (const key of Object.keys(o))
    if (!KNOWN.has(key))
      throw new InvalidArgumentError(
        key,
        `is not a queue setting (use concurrency, perKeyConcurrency, rate, fairness)`,
      );
  const change: {
    concurrency?: number | null;
    perKeyConcurrency?: number | null;
    rate?: { limit: number; per: number } | null;
    fairness?: QueueFairness;
  } = {};
  if (o.concurrency !== undefined)
    change.concurrency = limit('concurrency', o.concurrency, QUEUE_SETTINGS_LIMITS.concurrencyMax);
  if (o.perKeyConcurrency !== undefined)
    change.perKeyConcurrency = limit(
      'perKeyConcurrency',
      o.perKeyConcurrency,
      QUEUE_SETTINGS_LIMITS.perKeyConcurrencyMax,
    );
  if (o.rate !== undefined) change.rate = rate(o.rate);
  if (o.fairness !== undefined) {
    change.fairness = requireOneOf('fairness', o.fairness, QUEUE_FAIRNESS);
  }
  return change;
}

/** A positive integer cap, or null for none. */
function limit(field: string, value: unknown, max: number): number | null {
  if (value === null) return null;
  const n = requireSafeInteger(field, value, 1);
  if (n > max) throw new InvalidArgumentError(field, `must be at most ${max}, got ${n}`);
  return n;
}

function rate(value: unknown): { limit: number; per: number } | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new InvalidArgumentError(
      'rate',
      `must be { limit, per } or null, got ${typeName(value)}`,
    );
  const r = value as Record<string, unknown>;
  const n = limit('rate.limit', r.limit ?? undefined, QUEUE_SETTINGS_LIMITS.rateLimitMax);
  if (n === null) throw new InvalidArgumentError('rate.limit', 'must be an integer, got null');
  const per = toMilliseconds('rate.per', r.per, {
    min: QUEUE_SETTINGS_LIMITS.ratePerMinMs,
    max: QUEUE_SETTINGS_LIMITS.ratePerMaxMs,
  });
  return { limit: n, per };
}
