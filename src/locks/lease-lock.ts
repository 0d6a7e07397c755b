/**
 * The lease flavour: a lock that is a row with an expiry, like a lease, so it holds no
 * connection and no transaction between statements. A holder that crashes simply stops
 * renewing and the lock frees itself when its term expires.
 *
 * A term is kept by the held-lease machinery of the lease toolkit (src/core/held-lease.ts):
 * renewed every `renewEvery`, trusted until `sentAt + ttl - margin`, its signal fired by its
 * own timer at that deadline if renewals stall. Without `autoRenew` the term simply runs out
 * at the same deadline.
 *
 * Gaps between terms, all decided on the engine's clock and stored with the term:
 * - `lockAtLeast`: an unlock before `acquiredAt + lockAtLeast` keeps the lock closed until then
 *   (ShedLock's lockAtLeastFor: a fast task on a fast node does not run again on a slower one);
 * - `quietPeriod`: after the term ends, nobody (its holder included) may acquire for this long;
 * - `lockDelay`: after a term *expired* (its holder failed rather than unlocking), nobody may
 *   acquire for this long (Chubby's lock-delay, Consul's session lock-delay), so a holder that
 *   is merely slow has time to notice its lost signal before a successor acts.
 * The engine applies `max(quietPeriod, lockDelay)` after an expiry and `quietPeriod` after an
 * unlock, counted from the end of the term.
 */
import type { BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { HeldLease, type HeldLeaseCallbacks, type LeaseTermStore } from '../core/held-lease.js';
import { HeldTerms } from '../core/held-terms.js';
import { trustTiming, type TrustTiming } from '../core/trust.js';
import type { FencingToken, Lease } from '../core/types.js';
import { LIMITS, optionalBoolean, optionalFunctions, requireName } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';
import type { LeaseLockAcquireParams } from '../engine/locks.js';
import { defaultHolderId } from '../runtime/identity.js';
import { TermLock, type Lock, type LockTerm } from './lock.js';
import {
  DEFAULT_POLL_EVERY_MS,
  POLL_BASE_MS,
  pollUntilDone,
  type LockWakeups,
  type TryOutcome,
} from './wait.js';

export interface LeaseLockOptions extends HeldLeaseCallbacks {
  /** How long a term lasts without renewal (10 ms to one day), e.g. `"30s"`. */
  ttl: Duration;
  /** Who holds the lock, for humans and for the guard; default host:pid:random, per handle. */
  holder?: string;
  /** Renew in the background while held (default true). Without it a term ends at ttl - margin. */
  autoRenew?: boolean;
  /** How often to renew; default ttl/3, and shorter than ttl - margin. Needs autoRenew. */
  renewEvery?: Duration;
  /** Stop trusting the term this long before it would expire; default 10% of ttl, ≥ 300 ms. */
  margin?: Duration;
  /** Minimum gap after a term ends before anyone may acquire again (default 0). */
  quietPeriod?: Duration;
  /** An unlock keeps the lock until this long after the term was acquired (default 0). */
  lockAtLeast?: Duration;
  /** Gap after a term expired because its holder failed, before anyone may acquire (default 0). */
  lockDelay?: Duration;
  /** Cap of the jittered polling backoff while waiting in `lock()` (default 2 s). */
  pollEvery?: Duration;
}

/** Validated lease-lock settings: what a LeaseLock runs on. */
export interface LeaseLockSettings {
  readonly holder: string;
  readonly timing: TrustTiming;
  readonly quietMs: number;
  readonly atLeastMs: number;
  readonly delayMs: number;
  readonly poll: BackoffPolicy;
  readonly callbacks: HeldLeaseCallbacks;
}

const gapBounds = { min: 0, max: LIMITS.ttlMaxMs };

export function leaseLockSettings(options: LeaseLockOptions): LeaseLockSettings {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object with at least a ttl');
  const ttlMs = toMilliseconds('ttl', options.ttl, { min: LIMITS.ttlMinMs, max: LIMITS.ttlMaxMs });
  const autoRenew = optionalBoolean('autoRenew', options.autoRenew, true);
  if (!autoRenew && options.renewEvery !== undefined)
    throw new InvalidArgumentError('renewEvery', 'only applies with autoRenew: true');
  const renewing = trustTiming(ttlMs, options.renewEvery, options.margin);
  const pollEveryMs = toMilliseconds('pollEvery', options.pollEvery ?? DEFAULT_POLL_EVERY_MS, {
    max: LIMITS.ttlMaxMs,
  });
  optionalFunctions(options, ['onLost', 'onRenewed', 'onRenewError']);
  return {
    holder:
      options.holder === undefined ? defaultHolderId() : requireName('holder', options.holder),
    // Without auto-renew the renew timer is set past the trust deadline, whose timer ends the
    // term (and cancels it) first: the held lease then never renews.
    timing: autoRenew ? renewing : { ...renewing, renewEveryMs: 2 * ttlMs },
    quietMs: toMilliseconds('quietPeriod', options.quietPeriod ?? 0, gapBounds),
    atLeastMs: toMilliseconds('lockAtLeast', options.lockAtLeast ?? 0, gapBounds),
    delayMs: toMilliseconds('lockDelay', options.lockDelay ?? 0, gapBounds),
    poll: { baseMs: Math.min(POLL_BASE_MS, pollEveryMs), capMs: pollEveryMs },
    callbacks: {
      ...(options.onLost ? { onLost: options.onLost } : {}),
      ...(options.onRenewed ? { onRenewed: options.onRenewed } : {}),
      ...(options.onRenewError ? { onRenewError: options.onRenewError } : {}),
    },
  };
}

export class LeaseLock extends TermLock<FencingToken> implements Lock<FencingToken> {
  readonly holder: string;
  private held: HeldLease | undefined;
  private readonly store: LeaseTermStore;

  constructor(
    private readonly engine: Engine,
    name: string,
    private readonly settings: LeaseLockSettings,
    private readonly wakeups: LockWakeups,
    clock: Clock = engine.clock,
    private readonly terms: HeldTerms = new HeldTerms(),
  ) {
    super('lease', name, clock);
    this.holder = settings.holder;
    // The held lease renews and releases through this: lease-lock operations, with lockAtLeast.
    this.store = {
      leaseRenew: (p) =>
        engine.leaseLockRenew({
          name: p.resource,
          holder: p.holder,
          token: p.token,
          ttlMs: p.ttlMs,
        }),
      leaseRelease: (p) =>
        engine.leaseLockRelease({
          name: p.resource,
          holder: p.holder,
          token: p.token,
          atLeastMs: settings.atLeastMs,
        }),
    };
  }

  /** The current (or last) term as last confirmed by the engine; null before the first. */
  get lease(): Lease | null {
    return this.held?.lease ?? null;
  }

  /** Monotonic time (clock.monotonic()) until which the current term may be acted on. */
  get trustedUntil(): number | null {
    return this.isHeld() ? (this.held?.trustedUntil ?? null) : null;
  }

  /** Held, and the trust deadline has not passed (read off the clock, not just a flag). */
  override isHeld(): boolean {
    return super.isHeld() && (this.held?.isTrusted() ?? false);
  }

  /** The token of the new term, or null while someone else holds the lock or its gap runs. */
  async tryLock(): Promise<FencingToken | null> {
    return (await this.tryTerm())?.token ?? null;
  }

  /** The lock's latest term, whoever holds it; null when it was never taken. */
  current(): Promise<Lease | null> {
    return this.engine.leaseLockGet({ name: this.name });
  }

  protected async tryAcquireTerm(): Promise<LockTerm<FencingToken> | null> {
    const outcome = await this.attempt();
    return outcome.done ? this.hold(outcome.value) : null;
  }

  protected async acquireTerm(signal: AbortSignal): Promise<LockTerm<FencingToken>> {
    const got = await pollUntilDone({
      clock: this.clock,
      wakeups: this.wakeups,
      name: this.name,
      policy: this.settings.poll,
      signal,
      attempt: () => this.attempt(),
    });
    if (signal.aborted) {
      // Granted in the same instant the caller gave up: hand it straight back.
      await this.engine
        .leaseLockRelease({ name: this.name, holder: this.holder, token: got.lease.token })
        .catch(() => null);
      throw signal.reason;
    }
    return this.hold(got);
  }

  private async attempt(): Promise<TryOutcome<{ lease: Lease; sentAt: number }>> {
    const params: LeaseLockAcquireParams = {
      name: this.name,
      holder: this.holder,
      ttlMs: this.settings.timing.ttlMs,
      quietMs: this.settings.quietMs,
      delayMs: this.settings.delayMs,
    };
    const sentAt = this.clock.monotonic();
    const result = await this.engine.leaseLockAcquire(params);
    if (result.acquired) return { done: true, value: { lease: result.lease, sentAt } };
    // A term that has ended but whose gap still runs frees exactly at retryAfterMs.
    const exact = result.current !== null && result.current.state !== 'active';
    return { done: false, retryAfterMs: result.retryAfterMs, exact };
  }

  private hold(got: { lease: Lease; sentAt: number }): HeldLease {
    this.held = this.terms.track(
      new HeldLease(
        this.store,
        this.clock,
        got.lease,
        got.sentAt,
        this.settings.timing,
        this.settings.callbacks,
      ),
    );
    return this.held;
  }
}
