/**
 * The options of `queue.waitFor` and `lh.jobs.waitUntilFinished` (decision 0249), checked before
 * anything is read or marked: bad input changes nothing.
 */
import { toMilliseconds, type Duration } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';

export interface WaitForOptions {
  /**
   * Give up after this long (0: look once). `waitFor` then rejects with `WaitTimeoutError`
   * (code `timeout`); the job is left as it is. Default: wait until the job finishes.
   */
  timeout?: Duration;
  /** Stops the wait: the call rejects with `AbortedError` (code `aborted`). */
  signal?: AbortSignal;
}

export interface ResolvedWait {
  /** ms, or Infinity without `timeout`. */
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

export function resolveWait(options: unknown): ResolvedWait {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object { timeout?, signal? }');
  const o = options as WaitForOptions;
  const signal = o.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'must be an AbortSignal');
  return {
    timeoutMs:
      o.timeout === undefined
        ? Number.POSITIVE_INFINITY
        : toMilliseconds('timeout', o.timeout, { min: 0 }),
    signal,
  };
}
