/**
 * The options of the pull consumer (`queue.receive`, `tryReceive`, `receiveMany`; decision
 * 0246), checked before anything is claimed: bad input changes nothing.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import { requireSafeInteger } from '../core/validate.js';

export interface TryReceiveOptions {
  /**
   * How long a received message stays invisible to other receivers (its lease): at least 100 ms,
   * at most a day. After it, unless acked, nacked or extended, another receiver may take it.
   */
  visibility: Duration;
  /**
   * Delete a message's job when it is acked instead of keeping it as `completed` (the worker's
   * `removeOnComplete`): no history and no result, one row write fewer per message. Default
   * false.
   */
  removeOnAck?: boolean;
}

export interface ReceiveOptions extends TryReceiveOptions {
  /** Give up after this long and answer nothing; default: wait until a message comes. */
  wait?: Duration;
  /** Stops the wait: the call rejects with `AbortedError` (code `aborted`). */
  signal?: AbortSignal;
}

export interface ReceiveManyOptions extends ReceiveOptions {
  /** Most messages in the one claim statement: 1 to 1,000. */
  max: number;
}

export const RECEIVE_LIMITS = {
  visibilityMinMs: 100,
  visibilityMaxMs: 24 * 60 * 60 * 1000,
  maxMessages: 1_000,
} as const;

export interface ResolvedReceive {
  visibilityMs: number;
  /** ms, or Infinity without `wait`. */
  waitMs: number;
  max: number;
  signal: AbortSignal | undefined;
  removeOnAck: boolean;
}

export function visibilityMs(field: string, value: unknown): number {
  if (value === undefined) throw new InvalidArgumentError(field, 'is required (for example "30s")');
  return toMilliseconds(field, value, {
    min: RECEIVE_LIMITS.visibilityMinMs,
    max: RECEIVE_LIMITS.visibilityMaxMs,
  });
}

export function resolveReceive(options: unknown, withMax: boolean): ResolvedReceive {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object with at least { visibility }');
  const o = options as Partial<ReceiveManyOptions>;
  const max = withMax ? requireSafeInteger('max', o.max, 1) : 1;
  if (max > RECEIVE_LIMITS.maxMessages)
    throw new InvalidArgumentError('max', `must be at most ${RECEIVE_LIMITS.maxMessages}`);
  const signal = o.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'must be an AbortSignal');
  if (o.removeOnAck !== undefined && typeof o.removeOnAck !== 'boolean')
    throw new InvalidArgumentError('removeOnAck', 'must be a boolean');
  return {
    removeOnAck: o.removeOnAck ?? false,
    visibilityMs: visibilityMs('visibility', o.visibility),
    waitMs:
      o.wait === undefined ? Number.POSITIVE_INFINITY : toMilliseconds('wait', o.wait, { min: 0 }),
    max,
    signal,
  };
}
