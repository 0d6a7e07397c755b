/**
 * Options of a leader election: defaults in one place, validated once, every error naming the
 * option at fault (code `invalid_argument`).
 *
 * The timing rules are client-go's (leaderelection.NewLeaderElector), in our terms:
 *
 *   ttl  >  renewDeadline  >  1.2 × pollEvery      and      renewDeadline  >  1.2 × renewEvery
 *
 * - `ttl` is the lease duration written to the database: how long the term lives without a
 *   renewal, and so how long a crashed leader keeps the others waiting.
 * - `renewDeadline` is `ttl - margin`: the leader's trust window. A leader trusts its term until
 *   `sentAt + ttl - margin` (sentAt: when it *sent* the acquire or renew that succeeded), so it
 *   steps down before the database could give the term to someone else. `ttl > renewDeadline`
 *   is the same as `margin > 0`.
 * - `pollEvery` is client-go's retry period: how often a follower tries to take over. 1.2 is
 *   client-go's JitterFactor; keeping the trust window above 1.2 polls means a follower's view
 *   of the term is never older than the window it is judged by.
 * - `renewEvery` gets the same bound for the same reason on the leader's side: at least one
 *   retry of a failed renewal (HeldLease retries after margin/2) fits in the window before the
 *   leader has to step down, so a single slow statement does not cost the leadership.
 */
import type { Duration } from '../core/duration.js';
import { formatDuration, toMilliseconds } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { FencingToken } from '../core/types.js';
import { defaultMargin, trustTiming, type TrustTiming } from '../core/trust.js';
import { LIMITS, optionalFunctions, requireName } from '../core/validate.js';
import type { Logger } from '../runtime/logger.js';
import { defaultHolderId } from '../runtime/identity.js';

/** client-go's JitterFactor: the trust window must exceed this many polls (and renewals). */
export const ELECTION_JITTER_FACTOR = 1.2;

/** client-go's default lease duration; the takeover bound after a crash is ttl + pollEvery. */
export const DEFAULT_ELECTION_TTL_MS = 15_000;

/** Elections live in the lease-lock table under this prefix, apart from users' lease locks. */
export const ELECTION_LOCK_PREFIX = 'leasehold:election:';

export interface ElectionTiming {
  /** Lease duration (default 15 s). A crashed leader is replaced within ttl + pollEvery. */
  ttl?: Duration;
  /** How often the leader renews (default ttl/3). */
  renewEvery?: Duration;
  /** How often a follower tries to take over (default ttl/5); jitter only ever shortens it. */
  pollEvery?: Duration;
  /** Safety gap before expiry at which the leader stops trusting its term (default 10% of ttl, ≥ 300 ms). */
  margin?: Duration;
}

export interface ElectionCallbacks {
  /**
   * This instance became leader. `signal` aborts when the leadership ends (lost, presumed lost at
   * the trust deadline, or given up by close()). A state-change callback: return quickly and run
   * the real work elsewhere, gated by `signal` or `isLeader()`. A returned promise is not awaited.
   */
  onElected?: (token: FencingToken, signal: AbortSignal) => void | Promise<void>;
  /** The leadership this instance held has ended; `reason` is the signal's reason. */
  onRevoked?: (reason: Error) => void;
  /** The holder this instance observes changed (called for itself too when it is elected). */
  onNewLeader?: (instanceId: string) => void;
  /** A failed attempt or renewal, or a throwing callback. The election carries on. */
  onError?: (error: unknown) => void;
}

export interface ElectionOptions extends ElectionTiming, ElectionCallbacks {
  /** Unique among live instances; shown as the leader's id (default host:pid:random). */
  instanceId?: string;
  logger?: Logger;
}

export interface ResolvedElectionOptions {
  readonly name: string;
  /** The lease-lock row the election lives in. */
  readonly lockName: string;
  readonly instanceId: string;
  /** ttl, renewEvery and margin, as the held lease uses them. */
  readonly timing: TrustTiming;
  readonly pollEveryMs: number;
  /** ttl - margin: how long a leader trusts a term after sending its last successful statement. */
  readonly renewDeadlineMs: number;
}

export function resolveElectionOptions(
  name: string,
  options: ElectionOptions,
): ResolvedElectionOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object');
  const validName = requireName('name', name, LIMITS.nameMaxLength - ELECTION_LOCK_PREFIX.length);
  const instanceId =
    options.instanceId === undefined
      ? defaultHolderId()
      : requireName('instanceId', options.instanceId);
  optionalFunctions(options, ['onElected', 'onRevoked', 'onNewLeader', 'onError']);

  const ttlMs = toMilliseconds('ttl', options.ttl ?? DEFAULT_ELECTION_TTL_MS, {
    min: LIMITS.ttlMinMs,
    max: LIMITS.ttlMaxMs,
  });
  const marginMs =
    options.margin === undefined ? defaultMargin(ttlMs) : toMilliseconds('margin', options.margin);
  if (marginMs >= ttlMs)
    throw new InvalidArgumentError(
      'margin',
      `must be shorter than the ttl (${formatDuration(ttlMs)}): the leader would never trust its term`,
    );
  const renewDeadlineMs = ttlMs - marginMs;
  const ceiling = Math.floor(renewDeadlineMs / ELECTION_JITTER_FACTOR);
  const rule = `renewDeadline (ttl - margin = ${formatDuration(renewDeadlineMs)}) must exceed ${ELECTION_JITTER_FACTOR} × it, so it must be below ${formatDuration(ceiling + 1)}`;

  const renewEveryMs =
    options.renewEvery === undefined
      ? Math.max(1, Math.floor(ttlMs / 3))
      : toMilliseconds('renewEvery', options.renewEvery);
  if (renewEveryMs * ELECTION_JITTER_FACTOR >= renewDeadlineMs)
    throw new InvalidArgumentError(
      'renewEvery',
      `${formatDuration(renewEveryMs)} is too long: ${rule} (one failed renewal would cost the leadership)`,
    );

  const pollEveryMs =
    options.pollEvery === undefined
      ? Math.max(1, Math.floor(ttlMs / 5))
      : toMilliseconds('pollEvery', options.pollEvery);
  if (pollEveryMs * ELECTION_JITTER_FACTOR >= renewDeadlineMs)
    throw new InvalidArgumentError(
      'pollEvery',
      `${formatDuration(pollEveryMs)} is too long: ${rule} (client-go's rule: ttl > renewDeadline > 1.2 × retry period)`,
    );

  return {
    name: validName,
    lockName: ELECTION_LOCK_PREFIX + validName,
    instanceId,
    // Checked above with stricter bounds; trustTiming re-checks its own invariants.
    timing: trustTiming(ttlMs, renewEveryMs, marginMs),
    pollEveryMs,
    renewDeadlineMs,
  };
}
