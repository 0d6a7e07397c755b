/**
 * The lease-lock family of the engine seam: what lease locks and elections are built on.
 *
 * Lease locks are rows with an expiry, like leases, plus the gaps a lock wants between terms:
 * `quietMs` after a release, `max(quietMs, delayMs)` after an expiry (a holder that failed),
 * and `atLeastMs` on release (the term lasts at least that long from its acquisition). The gap
 * is stored with the term, so the rule in force is the one of the term that ended. A release
 * notifies topic `locks` with the lock's name, inline in the releasing statement.
 */
import type { FencingToken, Lease } from '../core/types.js';

/** The notification topic on which lock releases are announced (payload: the lock's name). */
export const LOCKS_TOPIC = 'locks';

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

export interface LeaseLockOperations {
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
}
