import { InvalidArgumentError } from './errors.js';
import { toMilliseconds, type Duration } from './duration.js';

/**
 * The trust window. A holder trusts its lease until `sentAt + ttl - margin`, where sentAt is
 * the monotonic time at which it *sent* the acquire or renew that succeeded: the database set
 * expiry from its own now, which is no earlier than sentAt, so the holder's deadline can only
 * fall before the real expiry. The margin absorbs clock-rate drift and the time between the
 * deadline timer firing and the protected work noticing.
 */
export interface TrustTiming {
  readonly ttlMs: number;
  readonly renewEveryMs: number;
  readonly marginMs: number;
}

/** 10% of the ttl, at least 300 ms, but never more than half the ttl. */
export function defaultMargin(ttlMs: number): number {
  return Math.min(Math.max(ttlMs * 0.1, 300), ttlMs * 0.5);
}

export function trustTiming(ttlMs: number, renewEvery?: Duration, margin?: Duration): TrustTiming {
  const marginMs =
    margin === undefined ? defaultMargin(ttlMs) : toMilliseconds('margin', margin, { min: 0 });
  if (marginMs >= ttlMs)
    throw new InvalidArgumentError('margin', `must be shorter than the ttl (${ttlMs} ms)`);
  const renewEveryMs =
    renewEvery === undefined ? Math.floor(ttlMs / 3) : toMilliseconds('renewEvery', renewEvery);
  if (renewEveryMs >= ttlMs - marginMs) {
    throw new InvalidArgumentError(
      'renewEvery',
      `must be shorter than ttl - margin (${ttlMs - marginMs} ms), or the lease is lost between renewals`,
    );
  }
  return { ttlMs, renewEveryMs: Math.max(1, renewEveryMs), marginMs };
}
