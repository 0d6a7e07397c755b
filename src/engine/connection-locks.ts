/**
 * The connection-lock family of the engine seam: advisory and session locks, held by a
 * dedicated connection (PostgreSQL) or emulated in process (memory).
 *
 * - A connection-bound lock lives as long as its connection: when it drops, the database frees
 *   the lock, and the handle's `signal` tells the holder at once.
 * - Waiting for one happens in the database (the connection sits in the lock queue), so a
 *   waiter costs one idle connection and no polling; `signal` cancels the wait.
 * - Session locks hand out a fencing token taken from a sequence *after* the row lock is held:
 *   a sequence value is never rolled back, so a holder whose connection drops can never leave
 *   the next holder with the same token.
 * - A wait rejects with `signal.reason` when it is a LeaseholdError (the caller says why it gave
 *   up: a TimeoutError, an AbortedError), and with an AbortedError otherwise.
 *
 * Engines without dedicated sessions (pgbouncer in transaction mode) declare
 * `advisoryLocks`/`sessionLocks` false and refuse these calls with `unsupported`.
 */
import { AbortedError, LeaseholdError } from '../core/errors.js';
import type { FencingToken } from '../core/types.js';

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

export interface ConnectionLockOperations {
  /** Tries a session-level advisory lock keyed by `name`; null when someone else holds it. */
  advisoryTryLock(params: ConnectionLockParams): Promise<ConnectionLock | null>;
  /** Waits for the advisory lock until it is free or `signal` aborts. */
  advisoryLock(params: ConnectionLockWaitParams): Promise<ConnectionLock>;

  /** Tries the session lock `name`; null when another open transaction holds it. */
  sessionLockTryAcquire(params: ConnectionLockParams): Promise<SessionLock | null>;
  /** Waits for the session lock until it is free or `signal` aborts. */
  sessionLockAcquire(params: ConnectionLockWaitParams): Promise<SessionLock>;
}

/** The error a cancelled wait rejects with: the signal's reason when it is ours. */
export function waitAbortError(signal: AbortSignal): LeaseholdError {
  const reason: unknown = signal.reason;
  return reason instanceof LeaseholdError
    ? reason
    : new AbortedError('the wait for the lock was aborted', reason);
}
