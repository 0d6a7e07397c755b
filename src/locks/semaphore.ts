/**
 * `lh.locks.semaphore(name, { permits })`: a counting semaphore whose permits are terms with an
 * expiry, like lease locks (decision 0240). At most `permits` permits of a name are valid at any
 * instant of the engine's clock (with every caller passing the same `permits`; the exact rule
 * for callers that disagree is in src/engine/semaphores.ts).
 *
 * A handle is a factory of permits, not a holder: each `acquire()` or `hold()` that succeeds is
 * a new permit with its own token and signal, so one handle may hold several at once (a worker
 * running N jobs under one limit). Both answer null when every permit is taken, unless told to
 * `wait`: then they wait for a permit as a lease lock's `lock()` does (a release wakes the
 * waiters through the `locks` topic; a polling backoff covers holders that crashed), bounded by
 * `timeout` and `signal`.
 * - `acquire()`: one term of `ttl`, not renewed; its signal aborts at `ttl - margin`.
 * - `hold()`: renewed every `renewEvery` until released or lost, as a held lease is.
 */
import { HeldTerms } from '../core/held-terms.js';
import type { BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { trustTiming, type TrustTiming } from '../core/trust.js';
import type { SemaphorePermit } from '../core/types.js';
import { LIMITS, optionalFunctions, requireName, requireSafeInteger } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';
import { semaphoreWakeKey } from '../engine/semaphores.js';
import { defaultHolderId } from '../runtime/identity.js';
import { HeldPermit, type HeldPermitCallbacks } from './held-permit.js';
import {
  DEFAULT_POLL_EVERY_MS,
  POLL_BASE_MS,
  pollUntilDone,
  waitScope,
  type LockOptions,
  type LockWakeups,
  type TryOutcome,
} from './wait.js';

export interface SemaphoreOptions {
  /** How many permits may be valid at once: a positive integer, at most 10,000. */
  permits: number;
  /** Cap of the jittered polling backoff while a `wait` goes on (default 2 s). */
  pollEvery?: Duration;
}

export interface PermitOptions extends HeldPermitCallbacks {
  /** How long the permit lasts without renewal (10 ms to one day), e.g. `"30s"`. */
  ttl: Duration;
  /** Who holds the permit, for humans; default host:pid:random, per semaphore handle. */
  holder?: string;
  /** Stop trusting the permit this long before it would expire; default 10% of ttl, ≥ 300 ms. */
  margin?: Duration;
  /**
   * Wait for a permit while all are taken: `true` until one frees, or `{ timeout, signal }`
   * (rejects with a TimeoutError, or the signal's reason). Default false: answer null at once.
   */
  wait?: boolean | LockOptions;
}

export interface HoldPermitOptions extends PermitOptions {
  /** How often to renew; default ttl/3, and shorter than ttl - margin. */
  renewEvery?: Duration;
}

export class Semaphore {
  readonly name: string;
  readonly permits: number;
  private readonly holder: string;
  private readonly poll: BackoffPolicy;

  constructor(
    private readonly engine: Engine,
    name: string,
    options: SemaphoreOptions,
    private readonly wakeups: LockWakeups,
    private readonly clock: Clock = engine.clock,
    private readonly terms: HeldTerms = new HeldTerms(),
  ) {
    this.name = requireName('name', name);
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'must be an object with at least permits');
    this.permits = requireSafeInteger('permits', options.permits, 1);
    if (this.permits > LIMITS.semaphoreMaxPermits)
      throw new InvalidArgumentError(
        'permits',
        `must be at most ${LIMITS.semaphoreMaxPermits}, got ${this.permits}`,
      );
    const pollEveryMs = toMilliseconds('pollEvery', options.pollEvery ?? DEFAULT_POLL_EVERY_MS, {
      max: LIMITS.ttlMaxMs,
    });
    this.poll = { baseMs: Math.min(POLL_BASE_MS, pollEveryMs), capMs: pollEveryMs };
    this.holder = defaultHolderId();
  }

  /** A permit for one term of `ttl`, not renewed; null while every permit is taken. */
  async acquire(options: PermitOptions): Promise<HeldPermit | null> {
    if (typeof options === 'object' && options !== null && 'renewEvery' in options)
      throw new InvalidArgumentError('renewEvery', 'only applies to hold(), which renews');
    const { ttlMs, timing } = this.timing(options, undefined);
    // The renew timer is set past the trust deadline, whose timer ends the term first: the
    // held permit never renews (as a lease lock without autoRenew).
    return this.take(options, { ...timing, renewEveryMs: 2 * ttlMs });
  }

  /** A permit renewed in the background until released or lost; null while all are taken. */
  async hold(options: HoldPermitOptions): Promise<HeldPermit | null> {
    const { timing } = this.timing(options, options?.renewEvery);
    return this.take(options, timing);
  }

  /** The valid permits of this semaphore right now, by slot, whoever holds them. */
  list(): Promise<SemaphorePermit[]> {
    return this.engine.semaphoreList({ name: this.name });
  }

  private timing(
    options: PermitOptions,
    renewEvery: Duration | undefined,
  ): { ttlMs: number; timing: TrustTiming } {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'must be an object with at least a ttl');
    const ttlMs = toMilliseconds('ttl', options.ttl, {
      min: LIMITS.ttlMinMs,
      max: LIMITS.ttlMaxMs,
    });
    return { ttlMs, timing: trustTiming(ttlMs, renewEvery, options.margin) };
  }

  private async take(options: PermitOptions, timing: TrustTiming): Promise<HeldPermit | null> {
    const holder =
      options.holder === undefined ? this.holder : requireName('holder', options.holder);
    const callbacks = permitCallbacks(options);
    const wait = options.wait ?? false;
    if (typeof wait !== 'boolean' && (typeof wait !== 'object' || wait === null))
      throw new InvalidArgumentError('wait', 'must be true, false or { timeout?, signal? }');
    // Validated before the first statement, so a bad option never takes a permit.
    const scope =
      wait === false ? undefined : waitScope(this.clock, this.what(), wait === true ? {} : wait);
    const attempt = async (): Promise<TryOutcome<{ permit: SemaphorePermit; sentAt: number }>> => {
      const sentAt = this.clock.monotonic();
      const result = await this.engine.semaphoreAcquire({
        name: this.name,
        holder,
        permits: this.permits,
        ttlMs: timing.ttlMs,
      });
      if (result.acquired) return { done: true, value: { permit: result.permit, sentAt } };
      return { done: false, retryAfterMs: result.retryAfterMs, exact: false };
    };
    let got: { permit: SemaphorePermit; sentAt: number };
    if (!scope) {
      const outcome = await attempt();
      if (!outcome.done) return null;
      got = outcome.value;
    } else {
      try {
        if (scope.signal.aborted) throw scope.signal.reason;
        got = await pollUntilDone({
          clock: this.clock,
          wakeups: this.wakeups,
          name: semaphoreWakeKey(this.name),
          policy: this.poll,
          signal: scope.signal,
          attempt,
        });
        if (scope.signal.aborted) {
          // Granted in the same instant the caller gave up: hand it straight back.
          const { slot, token } = got.permit;
          await this.engine
            .semaphoreRelease({ name: this.name, slot, holder, token })
            .catch(() => null);
          throw scope.signal.reason;
        }
      } catch (error) {
        throw scope.signal.aborted ? scope.signal.reason : error;
      } finally {
        scope.dispose();
      }
    }
    return this.terms.track(
      new HeldPermit(this.engine, this.clock, got.permit, got.sentAt, timing, callbacks),
    );
  }

  private what(): string {
    return `a permit of semaphore "${this.name}"`;
  }
}

function permitCallbacks(options: PermitOptions): HeldPermitCallbacks {
  optionalFunctions(options, ['onLost', 'onRenewed', 'onRenewError']);
  return {
    ...(options.onLost ? { onLost: options.onLost } : {}),
    ...(options.onRenewed ? { onRenewed: options.onRenewed } : {}),
    ...(options.onRenewError ? { onRenewError: options.onRenewError } : {}),
  };
}
