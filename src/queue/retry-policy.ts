/**
 * What a failed attempt turns into: a retry after an exponential backoff with full jitter, or
 * the dead letter. The worker decides the delay (so users can shape it); the engine only
 * applies it, and dead-letters on its own when attempts are exhausted.
 */
import { DEFAULT_BACKOFF, backoffDelay, type BackoffPolicy } from '../core/backoff.js';

/**
 * Throw this from a handler when retrying cannot help (a malformed payload, a refused card): the
 * job goes to the dead letter at once, whatever attempts remain.
 */
export class PermanentJobError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PermanentJobError';
  }
}

/** Stored on the job as `lastError`; long enough for a stack's top frames, short enough for a row. */
const ERROR_TEXT_MAX = 2_000;

export interface FailureDecision {
  readonly error: string;
  readonly retryDelayMs: number;
  readonly final: boolean;
}

export function decideFailure(
  error: unknown,
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): FailureDecision {
  return {
    error: describeError(error),
    retryDelayMs: backoffDelay(policy, attempt, random),
    final: error instanceof PermanentJobError,
  };
}

export function describeError(error: unknown): string {
  const text =
    error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  return text.length > ERROR_TEXT_MAX ? `${text.slice(0, ERROR_TEXT_MAX - 1)}…` : text;
}
