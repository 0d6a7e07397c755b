/**
 * The waiting loop of the testing helpers. It runs on real timers, not on the engine's clock: a
 * test that drives a memory engine with a ManualClock still needs its wait to end, and a wait
 * measured on a clock nobody advances never would. Polling, not notifications: a job finishing
 * announces nothing (only claimable work is notified), so the database is asked again.
 */
import { toMilliseconds, type Duration } from '../core/duration.js';
import { AbortedError, TimeoutError, type ErrorDetails } from '../core/errors.js';

/** Options every helper of `leasehold/testing` that waits accepts. */
export interface WaitOptions {
  /** Give up after this long, real time (default 10 s): rejects with a `TimeoutError`. */
  timeout?: Duration;
  /** How often to look again, real time (default 20 ms). */
  interval?: Duration;
  /** Stop waiting: rejects with an `AbortedError`. */
  signal?: AbortSignal;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 10_000;
export const DEFAULT_WAIT_INTERVAL_MS = 20;

export interface ResolvedWait {
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly signal: AbortSignal | undefined;
}

/** Validates the wait options before anything is read: bad input gets a typed error at once. */
export function resolveWait(options: WaitOptions): ResolvedWait {
  return {
    timeoutMs:
      options.timeout === undefined
        ? DEFAULT_WAIT_TIMEOUT_MS
        : toMilliseconds('timeout', options.timeout),
    intervalMs:
      options.interval === undefined
        ? DEFAULT_WAIT_INTERVAL_MS
        : toMilliseconds('interval', options.interval),
    signal: options.signal,
  };
}

/** What one look found: done with a value, or not yet, with what the timeout error should say. */
export type Look<T> = { done: true; value: T } | { done: false; state: ErrorDetails };

/**
 * Calls `look` until it is done, every `intervalMs`. Past the timeout it rejects with a
 * `TimeoutError` whose message is `describe(state)` and whose details are the last state seen,
 * so a failing test says what it was waiting for and where things stood.
 */
export async function pollUntil<T>(
  wait: ResolvedWait,
  look: () => Promise<Look<T>>,
  describe: (state: ErrorDetails, timeoutMs: number) => string,
): Promise<T> {
  const started = performance.now();
  for (;;) {
    if (wait.signal?.aborted) throw new AbortedError('the wait was aborted', wait.signal.reason);
    const seen = await look();
    if (seen.done) return seen.value;
    const left = wait.timeoutMs - (performance.now() - started);
    if (left <= 0)
      throw new TimeoutError(describe(seen.state, wait.timeoutMs), {
        ...seen.state,
        timeoutMs: wait.timeoutMs,
      });
    await pause(Math.min(wait.intervalMs, left), wait.signal);
  }
}

/** A real-time pause that ends early (and quietly) on abort: the loop reports the abort. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
