/**
 * The one interface of the three lock flavours, and the state every flavour shares.
 *
 * A `Lock` handle stands for one would-be holder of one named lock. Each `lock()` or successful
 * `tryLock()` starts a *term*: the stretch of time during which this handle holds the lock, with
 * its fencing token and its own `AbortSignal`. A term ends in one of two ways, both final:
 * - released: `unlock()` (or the end of `runLocked`); the signal aborts with an AbortedError;
 * - lost: the lock is known or presumed gone (its connection dropped, its lease could not be
 *   renewed before the trust deadline); the signal aborts with a LeaseLostError.
 * After either, the handle may `lock()` again and starts a new term. A handle holds at most one
 * term at a time: calling `lock()` while it holds one, or while a `lock()` is still waiting, is
 * a programming error (ConflictError), because a second connection of the same process would
 * wait for the first forever.
 *
 * Tokens: session and lease locks hand out a fencing token (`Lock<FencingToken>`) that is
 * strictly greater than every earlier holder's, for `lh.fence(scope).check(tx, token)` and for
 * any downstream system that can remember the newest token it saw. An advisory lock has no
 * token (`Lock<null>`): PostgreSQL's advisory locks carry none, and faking one would promise a
 * protection they cannot give. So its `lock()` resolves to `null` and its `tryLock()` answers
 * `true` or `false` (a `null` there would mean both "no token" and "not acquired").
 */
import type { Clock } from '../core/clock.js';
import { AbortedError, ConflictError, isLeaseholdError } from '../core/errors.js';
import type { FencingToken } from '../core/types.js';
import { waitScope, type LockOptions } from './wait.js';

export type LockKind = 'advisory' | 'session' | 'lease';

/** What a flavour hands out per term: a fencing token, or `null` for advisory locks. */
export type LockToken = FencingToken | null;

/**
 * What `tryLock()` answers: the token or `null` for fenced locks; `true` or `false` for
 * advisory locks, whose token is `null` and so cannot double as "not acquired".
 */
export type TryLockResult<Token extends LockToken> = [Token] extends [null]
  ? boolean
  : Token | null;

/** How long `lock()` may wait, and what cancels it (defined beside the wait, in wait.ts). */
export type { LockOptions } from './wait.js';

/** Protected code: receives the term's token and a signal that fires if the lock is lost. */
export type LockedFunction<Token extends LockToken, T> = (
  token: Token,
  signal: AbortSignal,
) => Promise<T> | T;

export interface Lock<Token extends LockToken = FencingToken> {
  readonly kind: LockKind;
  readonly name: string;
  /**
   * The signal of the current term (or of the last one, once it ended): aborts when the lock is
   * lost (LeaseLostError) or released (AbortedError). Before the first term it is already
   * aborted, so work gated on it never starts by mistake.
   */
  readonly signal: AbortSignal;
  /** True while this handle holds a term that has not been lost or released. */
  isHeld(): boolean;
  /** Waits until the lock is acquired; resolves to the term's token (`null` for advisory). */
  lock(options?: LockOptions): Promise<Token>;
  /** Takes the lock if it is free right now, without waiting. */
  tryLock(): Promise<TryLockResult<Token>>;
  /** Ends the current term; false when there was none (never locked, already lost or released). */
  unlock(): Promise<boolean>;
  /**
   * Locks (waiting as `lock(options)` does), runs `fn`, and unlocks whatever happens. If the lock
   * is lost before `fn` settles, rejects with the LeaseLostError even when `fn` succeeded: its
   * effects may not have been exclusive, and the caller must know.
   */
  runLocked<T>(fn: LockedFunction<Token, T>, options?: LockOptions): Promise<T>;
}

/** Session and lease locks: a fencing token per term. (Advisory locks are `Lock<null>`.) */
export type FencedLock = Lock<FencingToken>;

/** One term, as a flavour obtains it from the engine. */
export interface LockTerm<Token extends LockToken> {
  readonly token: Token;
  readonly signal: AbortSignal;
  /** Ends the term; false when it had already ended. */
  release(): Promise<boolean>;
}

/**
 * Term bookkeeping, the wait scope (timeout and signal) and `runLocked`, written once. A flavour
 * supplies how to wait for a term and how to try for one.
 */
export abstract class TermLock<Token extends LockToken> {
  private term: LockTerm<Token> | undefined;
  private acquiring = false;
  private readonly notHeld: AbortSignal;

  protected constructor(
    readonly kind: LockKind,
    readonly name: string,
    protected readonly clock: Clock,
  ) {
    this.notHeld = AbortSignal.abort(new AbortedError(`lock "${name}" has not been locked yet`));
  }

  /** Waits for a term until `signal` aborts; rejects with anything once it has. */
  protected abstract acquireTerm(signal: AbortSignal): Promise<LockTerm<Token>>;
  /** One attempt; null when someone else holds the lock. */
  protected abstract tryAcquireTerm(): Promise<LockTerm<Token> | null>;

  get signal(): AbortSignal {
    return this.term?.signal ?? this.notHeld;
  }

  isHeld(): boolean {
    return this.term !== undefined && !this.term.signal.aborted;
  }

  async lock(options: LockOptions = {}): Promise<Token> {
    // Validated before anything else, so a bad option never leaves the handle half-busy.
    const scope = waitScope(this.clock, `lock "${this.name}"`, options);
    try {
      this.begin();
    } catch (error) {
      scope.dispose();
      throw error;
    }
    try {
      if (scope.signal.aborted) throw scope.signal.reason;
      const term = await this.acquireTerm(scope.signal);
      this.term = term;
      return term.token;
    } catch (error) {
      // The flavour (or the engine under it) may wrap the reason; the caller gets it as given.
      throw scope.signal.aborted ? scope.signal.reason : error;
    } finally {
      this.acquiring = false;
      scope.dispose();
    }
  }

  /** The term from one attempt, or null; flavours shape the answer of `tryLock()` from it. */
  protected async tryTerm(): Promise<LockTerm<Token> | null> {
    this.begin();
    try {
      const term = await this.tryAcquireTerm();
      if (term) this.term = term;
      return term;
    } finally {
      this.acquiring = false;
    }
  }

  async unlock(): Promise<boolean> {
    const term = this.term;
    if (!term || term.signal.aborted) return false;
    return term.release();
  }

  async runLocked<T>(fn: LockedFunction<Token, T>, options?: LockOptions): Promise<T> {
    const token = await this.lock(options);
    const signal = this.signal;
    try {
      const value = await fn(token, signal);
      // Aborted before our own unlock: only a loss does that (or fn unlocking by itself).
      if (signal.aborted && isLeaseholdError(signal.reason, 'lease_lost')) throw signal.reason;
      return value;
    } finally {
      await this.unlock().catch(() => false);
    }
  }

  private begin(): void {
    if (this.acquiring)
      throw new ConflictError(`lock "${this.name}": a lock() of this handle is still waiting`, {
        name: this.name,
      });
    if (this.isHeld())
      throw new ConflictError(`lock "${this.name}" is already held by this handle`, {
        name: this.name,
      });
    this.acquiring = true;
  }
}
