/**
 * A worker's settings, validated once with errors that name the field. Timing rule: a lease is
 * renewed every `renewEvery` and trusted until `ttl - margin` after the renewal was sent, so
 * renewEvery must leave room for at least one failed renewal before the trust deadline.
 */
import { DEFAULT_BACKOFF, type BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import { toMilliseconds, typeName, type Duration } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { trustTiming } from '../core/trust.js';
import { LIMITS, optionalBoolean, requireName, requireSafeInteger } from '../core/validate.js';
import type { Logger } from '../runtime/logger.js';
import { AHEAD_AT_LEAST } from './claim-ahead.js';
import { toTimeoutMs } from './enqueue-options.js';
import type { JobHandler } from './job-handler.js';
import { dispatchByType, type JobTypes, type TypedHandlers } from './typed-jobs.js';

export type { JobContext, JobHandler } from './job-handler.js';

export interface WorkerOptions<M extends JobTypes = JobTypes> {
  queues: string | readonly string[];
  /** Runs every job; give this or `handlers`. */
  handler?: JobHandler;
  /**
   * One handler per job `type` (decision 0247); a job of another type, or of none, goes to the
   * dead letter at once with an error naming the types this worker handles.
   */
  handlers?: TypedHandlers<M>;
  /**
   * With `handlers`: what becomes of a job of a type this worker has no handler for (or of no
   * type). 'dead-letter' (default): claimed and dead-lettered at once with an error naming the
   * types it handles. 'leave': never claimed by this worker, left pending for one that handles
   * it (a partition's head of another type still holds its partition back).
   */
  unknownTypes?: 'dead-letter' | 'leave';
  /** Jobs run at once; default 10. */
  concurrency?: number;
  /** Lease of each claimed job; default 30 s. */
  leaseTtl?: Duration;
  /** Renewal interval of all in-flight leases; default leaseTtl / 3. */
  renewEvery?: Duration;
  /** Poll when idle (notifications wake it sooner); default 2 s. */
  pollInterval?: Duration;
  /**
   * Fewest ms between two claims, so a burst of notifications or of finishing jobs costs one
   * claim, not one each; default 5 ms. Not waited out with a backlog and half a batch of slots
   * free (decision 0237).
   */
  fetchCooldown?: Duration;
  /** Outcomes wait this long to share one statement; default 2 ms. */
  flushWindow?: Duration;
  /**
   * Most jobs per claim statement; default the concurrency, at least 16 (room for the jobs
   * claimed ahead) and at most 100. A claim never takes more than the free slots and the room
   * to claim ahead.
   */
  maxClaimBatch?: number;
  /**
   * While handlers finish faster than a claim's round trip, hold up to one claim batch of jobs
   * beyond the slots, so that the next job is in hand when a slot frees (decision 0277); a job
   * held so for 100 ms without a slot is given back to the queue. Default true; false: never
   * hold a job that cannot start at once.
   */
  claimAhead?: boolean;
  /** Backoff before retries; default 1 s doubling to 1 h, full jitter. */
  retryBackoff?: BackoffPolicy;
  /**
   * How long one attempt may run, for jobs enqueued without a `timeout` of their own (the job's
   * wins); default none. At the timeout the handler's signal fires with a `JobTimeoutError`, the
   * attempt fails through the retry policy and its slot is freed, whether or not the handler
   * stops (decision 0241). At most 7 days.
   */
  timeout?: Duration;
  /**
   * Delete each job when it completes instead of keeping it as `completed` until pruned; default
   * false. Faster (one row write fewer per job, about half the WAL), but completed jobs and their
   * results are gone at once: no history on the dashboard, no `retry` of a completed job. Failed
   * and dead-lettered jobs are kept either way.
   */
  removeOnComplete?: boolean;
  /** Listen for enqueue notifications; default true. */
  notifications?: boolean;
  /** How often the workers-table row is refreshed; default 5 s. */
  heartbeatEvery?: Duration;
  /** Stable id for the workers table and claimed_by; default a fresh unique id. */
  id?: string;
  /** Human name for dashboards; default `<host>:<pid>`. */
  name?: string;
  clock?: Clock;
  logger?: Logger;
  random?: () => number;
}

export interface ResolvedWorkerOptions {
  queues: string[];
  handler: JobHandler;
  concurrency: number;
  leaseTtlMs: number;
  renewEveryMs: number;
  marginMs: number;
  pollIntervalMs: number;
  fetchCooldownMs: number;
  flushWindowMs: number;
  maxClaimBatch: number;
  claimAhead: boolean;
  retryBackoff: BackoffPolicy;
  /** The default timeout of an attempt in ms; null: none. */
  timeoutMs: number | null;
  removeOnComplete: boolean;
  notifications: boolean;
  heartbeatEveryMs: number;
  /** Claim only jobs of these types (`unknownTypes: 'leave'`); undefined: any. */
  claimTypes: readonly string[] | undefined;
}

export const WORKER_LIMITS = { concurrencyMax: 1_000, claimBatchMax: 1_000 } as const;

export function resolveWorkerOptions<M extends JobTypes>(
  o: WorkerOptions<M>,
): ResolvedWorkerOptions {
  if (typeof o !== 'object' || o === null)
    throw new InvalidArgumentError('options', `must be an object, got ${typeName(o)}`);
  const queueList = typeof o.queues === 'string' ? [o.queues] : o.queues;
  if (!Array.isArray(queueList) || queueList.length === 0)
    throw new InvalidArgumentError('queues', 'must be a queue name or a non-empty array of them');
  const queues = [...new Set(queueList.map((q, i) => requireName(`queues[${i}]`, q)))];
  if ((o.handler === undefined) === (o.handlers === undefined))
    throw new InvalidArgumentError('handler', 'give either handler or handlers (one per job type)');
  if (o.handler !== undefined && typeof o.handler !== 'function')
    throw new InvalidArgumentError('handler', `must be a function, got ${typeName(o.handler)}`);
  const handler = o.handler ?? dispatchByType(o.handlers);
  if (
    o.unknownTypes !== undefined &&
    o.unknownTypes !== 'dead-letter' &&
    o.unknownTypes !== 'leave'
  )
    throw new InvalidArgumentError('unknownTypes', 'must be "dead-letter" or "leave"');
  if (o.unknownTypes !== undefined && o.handlers === undefined)
    throw new InvalidArgumentError('unknownTypes', 'applies only with handlers (one per job type)');
  const claimTypes = o.unknownTypes === 'leave' ? Object.keys(o.handlers!) : undefined;
  const concurrency =
    o.concurrency === undefined ? 10 : requireSafeInteger('concurrency', o.concurrency, 1);
  if (concurrency > WORKER_LIMITS.concurrencyMax)
    throw new InvalidArgumentError(
      'concurrency',
      `must be at most ${WORKER_LIMITS.concurrencyMax}`,
    );
  const leaseTtlMs = toMilliseconds('leaseTtl', o.leaseTtl ?? 30_000, {
    min: 100,
    max: LIMITS.ttlMaxMs,
  });
  const timing = trustTiming(leaseTtlMs, o.renewEvery);
  // By default a claim may also take the jobs a worker holds ahead (decision 0277): a worker of
  // concurrency 1 would otherwise claim them one per statement.
  const maxClaimBatch =
    o.maxClaimBatch === undefined
      ? Math.min(Math.max(concurrency, AHEAD_AT_LEAST), 100)
      : requireSafeInteger('maxClaimBatch', o.maxClaimBatch, 1);
  if (maxClaimBatch > WORKER_LIMITS.claimBatchMax)
    throw new InvalidArgumentError(
      'maxClaimBatch',
      `must be at most ${WORKER_LIMITS.claimBatchMax}`,
    );
  return {
    queues,
    handler,
    concurrency,
    leaseTtlMs,
    renewEveryMs: timing.renewEveryMs,
    marginMs: timing.marginMs,
    pollIntervalMs: toMilliseconds('pollInterval', o.pollInterval ?? 2_000, { min: 10 }),
    fetchCooldownMs: toMilliseconds('fetchCooldown', o.fetchCooldown ?? 5, { min: 0 }),
    flushWindowMs: toMilliseconds('flushWindow', o.flushWindow ?? 2, { min: 0, max: 1_000 }),
    maxClaimBatch,
    claimAhead: optionalBoolean('claimAhead', o.claimAhead, true),
    retryBackoff: o.retryBackoff ?? DEFAULT_BACKOFF,
    timeoutMs: o.timeout === undefined ? null : toTimeoutMs(o.timeout),
    removeOnComplete: optionalBoolean('removeOnComplete', o.removeOnComplete, false),
    notifications: optionalBoolean('notifications', o.notifications, true),
    heartbeatEveryMs: toMilliseconds('heartbeatEvery', o.heartbeatEvery ?? 5_000, { min: 10 }),
    claimTypes,
  };
}
