/**
 * Exponential backoff with full jitter: the delay before retry `attempt` (1-based) is drawn
 * uniformly from [0, min(cap, base * 2^(attempt-1))]. Full jitter spreads a herd of retries
 * evenly instead of letting them collide again at the same instant.
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 60 * 60 * 1_000 };

export function backoffCeiling(policy: BackoffPolicy, attempt: number): number {
  const exponent = Math.max(0, attempt - 1);
  // 2^exponent overflows to Infinity long before it matters; min() tames it.
  return Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(exponent, 60));
}

export function backoffDelay(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * (backoffCeiling(policy, attempt) + 1));
}

/** A value spread by ±fraction, for jittered polling intervals. */
export function jitter(ms: number, fraction = 0.1, random: () => number = Math.random): number {
  return Math.max(0, Math.round(ms * (1 - fraction + 2 * fraction * random())));
}
