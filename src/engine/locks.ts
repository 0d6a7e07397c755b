/**
 * The lock family of the engine seam: what advisory, session and lease locks, the elector,
 * schedules and the fence helper are built on.
 *
 * - Connection-bound locks (advisory, session) live as long as a dedicated connection: when it
 *   drops, the database frees the lock, and the handle's `signal` tells the holder at once.
 *   Waiting for one happens in the database (the connection sits in the lock queue), so a
 *   waiter costs one idle connection and no polling; `signal` cancels the wait.
 * - Session locks hand out a fencing token taken from a sequence *after* the row lock is held:
 *   a sequence value is never rolled back, so a holder whose connection drops can never leave
 *   the next holder with the same token.
 * - Lease locks are rows with an expiry, like leases, plus the gaps a lock wants between terms:
 *   `quietMs` after a release, `max(quietMs, delayMs)` after an expiry (a holder that failed),
 *   and `atLeastMs` on release (the term lasts at least that long from its acquisition). The
 *   gap is stored with the term, so the rule in force is the one of the term that ended.
 *   A release notifies topic `locks` with the lock's name, inline in the releasing statement.
 * - Schedule slots are claimed once per (schedule, slot) and never again; a slot can be
 *   claimed only once it has started on the engine's clock. The claimant records the slot it
 *   expects after this one (`nextSlot`): only instances know a schedule's series, and the
 *   dashboard wants it without one (decision 0301).
 * - Fences keep the newest token seen per scope; an older token is refused.
 *
 * A wait rejects with `signal.reason` when it is a LeaseholdError (the caller says why it gave
 * up: a TimeoutError, an AbortedError), and with an AbortedError otherwise.
 */
import { AbortedError, LeaseholdError } from '../core/errors.js';
import type { FencingToken, Lease } from '../core/types.js';
import type { CallerTransaction } from './engine.js';

/** The notification topic on which lock releases are announced (payload: the lock's name). */
export const LOCKS_TOPIC = 'locks';

/** A lock held by a dedicated connection (PostgreSQL) or emulated in process (memory). */
export interface ConnectionLock {
  readonly name: string;
  /** Aborts when the lock is known lost (its connection dropped) or released. */
  readonly signal: AbortSignal;
  /** The PostgreSQL backend holding the lock (for diagnostics); null in memory. */
  readonly backendPid: number | null;
  /** Frees the lock and its connection; false when it was already lost or released. */
  release(): Promise<boolean>;
}

/** A session lock: a row lock held by an open transaction, with a fencing token. */
export interface SessionLock extends ConnectionLock {
  /** Committed before it was handed out; strictly greater than every earlier holder's. */
  readonly token: FencingToken;
}

export interface ConnectionLockParams {
  name: string;
}

export interface ConnectionLockWaitParams extends ConnectionLockParams {
  /** Cancels the wait; the promise rejects with its reason (see the module comment). */
  signal: AbortSignal;
}

export interface LeaseLockAcquireParams {
  name: string;
  holder: string;
  ttlMs: number;
  /** Gap after a release of this term before anyone may acquire. Default 0. */
  quietMs?: number;
  /** Gap after an expiry of this term (its holder failed) before anyone may acquire. Default 0. */
  delayMs?: number;
}

export type LeaseLockAcquireResult =
  | { readonly acquired: true; readonly lease: Lease }
  | {
      readonly acquired: false;
      /** The term in the way (live, or ended but still within its gap); null if none was found. */
      readonly current: Lease | null;
      /** Engine time until the lock becomes free if the current term is not renewed. */
      readonly retryAfterMs: number;
    };

export interface LeaseLockRenewParams {
  name: string;
  holder: string;
  token: FencingToken;
  ttlMs: number;
}

export interface LeaseLockReleaseParams {
  name: string;
  holder: string;
  token: FencingToken;
  /** Keep the lock until `acquiredAt + atLeastMs` (ShedLock's lockAtLeast). Default 0. */
  atLeastMs?: number;
}

export interface ScheduleSlot {
  readonly name: string;
  /** The start of the slot: its identity. */
  readonly slot: Date;
  readonly holder: string;
  /** The token of the lock or leadership under which it ran, if any. */
  readonly token: FencingToken | null;
  readonly claimedAt: Date;
  /** The slot after this one, as the claimant's schedule computed it; null if none or unknown. */
  readonly nextSlot: Date | null;
}

export interface ScheduleSlotClaimParams {
  name: string;
  slot: Date;
  holder: string;
  token?: FencingToken | null;
  /** The schedule's slot after this one, recorded with the claim. Default null. */
  nextSlot?: Date | null;
}

/** A schedule as its newest claimed slot describes it. */
export interface ScheduleSummary {
  readonly name: string;
  /** The newest claimed slot. */
  readonly lastSlot: Date;
  /** Who claimed (ran) it, and under which token. */
  readonly holder: string;
  readonly token: FencingToken | null;
  readonly claimedAt: Date;
  /** The slot after it, as its claimant computed it: a forecast, in the past if nobody runs it. */
  readonly nextSlot: Date | null;
  /** Claimed slots still kept (old ones are pruned: see scheduleSlotPrune). */
  readonly runs: number;
}

export interface FenceCheckParams {
  scope: string;
  token: FencingToken;
  /** Check inside the caller's transaction, which then guards the caller's write. */
  tx?: CallerTransaction;
}

export interface LockOperations {
  /** Tries a session-level advisory lock keyed by `name`; null when someone else holds it. */
  advisoryTryLock(params: ConnectionLockParams): Promise<ConnectionLock | null>;
  /** Waits for the advisory lock until it is free or `signal` aborts. */
  advisoryLock(params: ConnectionLockWaitParams): Promise<ConnectionLock>;

  /** Tries the session lock `name`; null when another open transaction holds it. */
  sessionLockTryAcquire(params: ConnectionLockParams): Promise<SessionLock | null>;
  /** Waits for the session lock until it is free or `signal` aborts. */
  sessionLockAcquire(params: ConnectionLockWaitParams): Promise<SessionLock>;

  /**
   * Takes the lease lock if it is free and past its gap, bumping its token; the live holder
   * re-acquiring gets its own term back, extended, with the same token.
   */
  leaseLockAcquire(params: LeaseLockAcquireParams): Promise<LeaseLockAcquireResult>;
  /** Extends a live term held by `holder` with `token`; null when it is no longer theirs. */
  leaseLockRenew(params: LeaseLockRenewParams): Promise<Lease | null>;
  /** Ends a live term (or shortens it to `acquiredAt + atLeastMs`); null when not theirs. */
  leaseLockRelease(params: LeaseLockReleaseParams): Promise<Lease | null>;
  /** The lock's latest term, whatever its state; null when it was never taken. */
  leaseLockGet(params: { name: string }): Promise<Lease | null>;
  /**
   * The latest term of each lease lock whose name starts with `prefix` (default: every lock),
   * whatever its state, in name order (by code point, whatever the database's collation).
   */
  leaseLockList(params: { prefix?: string; limit: number }): Promise<Lease[]>;

  /** Claims a started slot of a schedule; null when it was claimed before or has not started. */
  scheduleSlotClaim(params: ScheduleSlotClaimParams): Promise<ScheduleSlot | null>;
  /** The newest claimed slots of a schedule, newest first. */
  scheduleSlotList(params: { name: string; limit: number }): Promise<ScheduleSlot[]>;
  /** Forgets slots that started before `before`; returns how many. */
  scheduleSlotPrune(params: { name: string; before: Date }): Promise<number>;
  /** One summary per schedule with a claimed slot kept, from its newest one, in name order. */
  scheduleList(params: { limit: number }): Promise<ScheduleSummary[]>;

  /**
   * Records `token` as the newest seen for `scope`, or throws StaleTokenError when a newer one
   * was seen. An equal token passes (the same holder writing again).
   */
  fenceCheck(params: FenceCheckParams): Promise<void>;
  /** The newest token seen for `scope`; null when none was. */
  fenceGet(params: { scope: string }): Promise<FencingToken | null>;
}

/** The error a cancelled wait rejects with: the signal's reason when it is ours. */
export function waitAbortError(signal: AbortSignal): LeaseholdError {
  const reason: unknown = signal.reason;
  return reason instanceof LeaseholdError
    ? reason
    : new AbortedError('the wait for the lock was aborted', reason);
}
