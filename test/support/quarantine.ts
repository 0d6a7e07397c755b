/**
 * Waiting out a failover quarantine (decision 0225) in a test: the condition is the grant
 * itself, retried as each refusal's `retryAfterMs` says, with a generous real-time limit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isLeaseholdError } from '../../src/core/errors.js';

/** Runs `grant` until no quarantine refuses it; answers the grant and how many refusals came first. */
export async function afterQuarantine<T>(
  grant: () => Promise<T>,
  { limitMs = 60_000 }: { limitMs?: number } = {},
): Promise<[T, number]> {
  const deadline = Date.now() + limitMs;
  for (let refusals = 0; ; refusals++) {
    try {
      return [await grant(), refusals];
    } catch (error) {
      if (!isLeaseholdError(error, 'unavailable') || Date.now() > deadline) throw error;
      if (error.details['reason'] !== 'failover_quarantine') throw error;
      await sleep(Number(error.details['retryAfterMs']) + 20);
    }
  }
}
