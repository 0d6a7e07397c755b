/**
 * Options of a schedule: defaults in one place, validated once, errors naming the option.
 *
 * Modes (seed 002's three uses of one guarded UPDATE, each still claiming its slot):
 * - `lock`: every instance wakes for a slot; the one that takes the run lock and claims the
 *   slot runs it, then releases the lock (not before `lockAtLeast`). Work spreads across the
 *   fleet and a crash costs nothing but that run.
 * - `auto`: the seed's auto-expiring lock: for short tasks run infrequently. Same as `lock`, but
 *   the run lock is never released: it expires by itself `lockAtMost` after it was taken, which
 *   must therefore be shorter than the gap between slots. One statement fewer per run.
 * - `leader`: only the elected leader (sticky) runs the slots; the others stand by and one of
 *   them takes over when the leader dies. For work that benefits from staying on one instance.
 *
 * `lockAtMost` (ShedLock's lockAtMostFor) is how long the run lock lives: the run's signal fires
 * at its trust deadline, and a crashed runner blocks the schedule no longer than that. It
 * defaults to the gap between slots (half of it in `auto`). `lockAtLeast` (lockAtLeastFor) keeps
 * the lock that long after it was taken even when the run ends sooner: slots falling inside it
 * are skipped.
 */
import type { Clock } from '../core/clock.js';
import { formatDuration, toMilliseconds, type Duration } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { LIMITS, optionalBoolean, requireName, requireOneOf } from '../core/validate.js';
import { Election } from '../locks/election.js';
import type { ElectionTiming } from '../locks/election-options.js';
import type { Logger } from '../runtime/logger.js';
import type { EnqueueOptions } from '../queue/enqueue-options.js';
import { defaultHolderId } from '../runtime/identity.js';
import { cronSlots, everySlots, shortestGapMs, type SlotSeries } from './slots.js';

export type ScheduleMode = 'lock' | 'auto' | 'leader';
export const SCHEDULE_MODES: readonly ScheduleMode[] = ['lock', 'auto', 'leader'];

/** Run locks live in the lease-lock table under this prefix, apart from users' lease locks. */
export const SCHEDULE_LOCK_PREFIX = 'leasehold:schedule:';

/** Shortest `every`: each slot is a database write on every instance; faster work wants a loop. */
export const MIN_EVERY_MS = 1_000;

/** A job each slot enqueues (decision 0248). */
export interface ScheduledEnqueue {
  queue: string;
  payload?: unknown;
  /** Enqueue options of each slot's job; the key is the schedule's and the slot's. */
  options?: Omit<EnqueueOptions, 'tx' | 'key' | 'onConflict' | 'debounce'>;
}

export interface ScheduleOptions {
  /** A period such as `'1m'`; slots are aligned to the Unix epoch. Give this or `cron`. */
  every?: Duration;
  /** A cron expression (5 fields, or 6 with seconds first). Give this or `every`. */
  cron?: string;
  /** IANA time zone of the cron expression (default `UTC`, so every instance agrees). */
  timezone?: string;
  /** Default `lock`. */
  mode?: ScheduleMode;
  /** Keep the run lock at least this long after taking it (default 0). Not in `auto`. */
  lockAtLeast?: Duration;
  /** The run lock lives at most this long (default: the gap between slots; half of it in `auto`). */
  lockAtMost?: Duration;
  /**
   * Run the newest slot that started before this instance started (or, in `leader` mode, before
   * it was elected) if nobody ran it. Default false: a slot missed while every instance was
   * down (or while nobody led) stays missed.
   */
  catchUp?: boolean;
  /** Unique among live instances (default host:pid:random). */
  instanceId?: string;
  /**
   * `leader` mode only: an election to share (the schedule runs wherever it leads and does not
   * close it), or the timing of the schedule's own election `schedule:<name>`.
   */
  election?: Election | ElectionTiming;
  /**
   * Instead of a function: each slot enqueues one durable job (decision 0248), keyed by the
   * schedule and the slot. `lh.schedule(name, { cron, enqueue: { queue, payload, options } })`.
   */
  enqueue?: ScheduledEnqueue;
  /** A failed slot attempt or a throwing task. The schedule carries on. */
  onError?: (error: unknown) => void;
  logger?: Logger;
}

export interface ResolvedScheduleOptions {
  readonly name: string;
  /** The run lock's row in the lease-lock table. */
  readonly lockName: string;
  readonly instanceId: string;
  readonly mode: ScheduleMode;
  readonly series: SlotSeries;
  readonly lockAtLeastMs: number;
  readonly lockAtMostMs: number;
  readonly catchUp: boolean;
  readonly election: Election | ElectionTiming | undefined;
}

export function resolveScheduleOptions(
  name: string,
  options: ScheduleOptions,
  clock: Clock,
): ResolvedScheduleOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object');
  const validName = requireName('name', name, LIMITS.nameMaxLength - SCHEDULE_LOCK_PREFIX.length);
  const mode = requireOneOf('mode', options.mode ?? 'lock', SCHEDULE_MODES);
  const series = resolveSeries(options);
  const gapMs = Math.min(shortestGapMs(series, clock.now()) ?? LIMITS.ttlMaxMs, LIMITS.ttlMaxMs);
  const lockBounds = { min: LIMITS.ttlMinMs, max: LIMITS.ttlMaxMs };

  let lockAtMostMs: number;
  let lockAtLeastMs: number;
  if (mode === 'auto') {
    if (options.lockAtLeast !== undefined)
      throw new InvalidArgumentError(
        'lockAtLeast',
        'mode auto never releases its lock, which lives lockAtMost: give lockAtMost instead',
      );
    lockAtMostMs =
      options.lockAtMost === undefined
        ? Math.max(LIMITS.ttlMinMs, Math.floor(gapMs / 2))
        : toMilliseconds('lockAtMost', options.lockAtMost, lockBounds);
    if (lockAtMostMs >= gapMs)
      throw new InvalidArgumentError(
        'lockAtMost',
        `must be shorter than the gap between slots (${formatDuration(gapMs)}) in mode auto: the lock is not released and would block the next slot`,
      );
    lockAtLeastMs = lockAtMostMs;
  } else {
    lockAtMostMs =
      options.lockAtMost === undefined
        ? Math.max(LIMITS.ttlMinMs, gapMs)
        : toMilliseconds('lockAtMost', options.lockAtMost, lockBounds);
    lockAtLeastMs =
      options.lockAtLeast === undefined
        ? 0
        : toMilliseconds('lockAtLeast', options.lockAtLeast, { min: 0 });
    if (lockAtLeastMs > lockAtMostMs)
      throw new InvalidArgumentError(
        'lockAtLeast',
        `must not exceed lockAtMost (${formatDuration(lockAtMostMs)})`,
      );
  }

  const catchUp = optionalBoolean('catchUp', options.catchUp, false);
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new InvalidArgumentError('onError', 'must be a function');
  if (options.election !== undefined) {
    if (mode !== 'leader')
      throw new InvalidArgumentError('election', `applies to mode leader only (mode is ${mode})`);
    if (typeof options.election !== 'object' || options.election === null)
      throw new InvalidArgumentError('election', 'must be an Election or election timing');
  }

  return {
    name: validName,
    lockName: SCHEDULE_LOCK_PREFIX + validName,
    instanceId:
      options.instanceId === undefined
        ? defaultHolderId()
        : requireName('instanceId', options.instanceId),
    mode,
    series,
    lockAtLeastMs,
    lockAtMostMs,
    catchUp,
    election: options.election,
  };
}

function resolveSeries(options: ScheduleOptions): SlotSeries {
  if (options.every !== undefined && options.cron !== undefined)
    throw new InvalidArgumentError('every', 'give every or cron, not both');
  if (options.every !== undefined) {
    if (options.timezone !== undefined)
      throw new InvalidArgumentError('timezone', 'applies to cron only (every is aligned to UTC)');
    const everyMs = toMilliseconds('every', options.every, { min: MIN_EVERY_MS });
    return everySlots(everyMs, `every ${formatDuration(everyMs)}`);
  }
  if (options.cron !== undefined) return cronSlots(options.cron, options.timezone ?? 'UTC');
  throw new InvalidArgumentError(
    'every',
    'give every (a duration such as "5m") or cron (an expression such as "0 3 * * *")',
  );
}

/** Election timing given as options, as opposed to a shared Election. */
export function isElectionTiming(
  value: Election | ElectionTiming | undefined,
): value is ElectionTiming {
  return value !== undefined && !(value instanceof Election);
}
