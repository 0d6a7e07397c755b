/**
 * Leader election: one leader among the instances that share a name, kept by the leader for as
 * long as it lives (sticky), handed over at once when it closes, and taken over within
 * ttl + pollEvery when it dies.
 *
 * The leadership is a lease-lock row (`leasehold:election:<name>`), so the database clock
 * decides who leads and every term has a fencing token that grows with each new leader.
 *
 * States: idle -> candidate <-> leader, and any -> closed (final).
 * - candidate: a BackgroundService loop tries to take the row every `pollEvery` (jitter only
 *   shortens the wait). A miss tells who leads (-> onNewLeader when that changes) and when the
 *   term runs out if it is not renewed; the next try is scheduled no later than that instant,
 *   so a dead leader's successor tries the moment its term expires. A `locks` notification
 *   naming the row (the releasing statement sends it) wakes the candidate at once; polling
 *   works with every notification lost.
 * - leader: a HeldLease renews the term every `renewEvery` and fires its signal at the trust
 *   deadline (`sentAt + ttl - margin`) from a timer of its own, so a renewal that hangs cannot
 *   delay the step-down. `isLeader()` compares the clock with that deadline instead of reading
 *   a flag: a process frozen past its deadline (GC, SIGSTOP) answers false the instant it
 *   resumes, before any timer has had a chance to run.
 * - leader -> candidate: the term was lost (renewal refused, or the trust deadline passed). The
 *   signal aborts with a LeaseLostError, onRevoked runs, and the candidate tries again at once
 *   (it learns who leads now, or takes its own still-live term back after a hiccup).
 * - closed: `close()` aborts the signal, calls onRevoked, releases the row (so a candidate
 *   woken by the notification takes over at once, without waiting for expiry) and stops.
 *
 * Invariant: at any instant at most one instance answers `isLeader()` true, as long as clocks
 * run at about the same rate: a leader's trust deadline falls before the database expiry that
 * any successor must wait for (the margin absorbs rate drift and timer lateness).
 */
import { AbortedError, ClosedError, type LeaseholdError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import { HeldLease, type LeaseTermStore } from '../core/held-lease.js';
import type { FencingToken, Lease } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import { LOCKS_TOPIC } from '../engine/locks.js';
import type { Subscription } from '../engine/notifications.js';
import { TypedEvents } from '../runtime/events.js';
import { silentLogger, type Logger } from '../runtime/logger.js';
import {
  resolveElectionOptions,
  type ElectionCallbacks,
  type ElectionOptions,
  type ResolvedElectionOptions,
} from './election-options.js';
import { CLOSED, ElectionLoop, leaseLockTermStore, raceAbort } from './election-loop.js';

export type ElectionState = 'idle' | 'candidate' | 'leader' | 'closed';

/** The current leader as the database sees it. */
export interface LeaderInfo {
  readonly instanceId: string;
  readonly token: FencingToken;
  /** When this leader's term began (database time). */
  readonly electedAt: Date;
  /** When the term ends unless renewed (database time). */
  readonly expiresAt: Date;
}

interface ElectionEventBase {
  /** The election's name. */
  readonly name: string;
  /** This instance. */
  readonly instanceId: string;
}

/** What an election tells, by what happened (the part after `election:`). */
interface ElectionHappenings {
  /** This instance became leader; `trustedUntil` is on `clock.monotonic()`. */
  elected: ElectionEventBase & { token: FencingToken; trustedUntil: number };
  renewed: ElectionEventBase & { token: FencingToken; trustedUntil: number };
  revoked: ElectionEventBase & { token: FencingToken; reason: Error };
  /** The holder this instance observes changed. */
  'new-leader': ElectionEventBase & { leader: string };
}

/**
 * The events of an election: `election:elected`, `election:renewed`, `election:revoked`,
 * `election:new-leader`. Each is also told under its former name, `elector:*`, with the same
 * payload, to listeners of that name written before decision 0235 (deprecated: listen to
 * `election:*`; `onAny` sees each event once, under its current name).
 */
export type ElectionEvents = {
  [K in keyof ElectionHappenings as `election:${K}`]: ElectionHappenings[K];
} & {
  /** @deprecated the former name of the `election:` event of the same suffix (decision 0235). */
  [K in keyof ElectionHappenings as `elector:${K}`]: ElectionHappenings[K];
} & { [name: string]: unknown };

/** What one try did (`runOnce()`). */
export type ElectionAttempt =
  | { readonly outcome: 'elected'; readonly token: FencingToken }
  | { readonly outcome: 'leading'; readonly token: FencingToken }
  | {
      readonly outcome: 'following';
      readonly leader: string | null;
      /** Engine time until the leader's term runs out unless renewed. */
      readonly retryAfterMs: number;
    }
  | { readonly outcome: 'closed' };

export class Election {
  readonly name: string;
  readonly instanceId: string;
  readonly events = new TypedEvents<ElectionEvents>();
  private readonly config: ResolvedElectionOptions;
  private readonly callbacks: ElectionCallbacks;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly store: LeaseTermStore;
  private readonly closeController = new AbortController();
  private status: ElectionState = 'idle';
  private held: HeldLease | undefined;
  private observed: string | null = null;
  private loop: ElectionLoop<ElectionAttempt> | undefined;
  private subscription: Subscription | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private attempting = false;
  private wakePending = false;

  constructor(
    private readonly engine: Engine,
    name: string,
    options: ElectionOptions = {},
  ) {
    this.config = resolveElectionOptions(name, options);
    this.name = this.config.name;
    this.instanceId = this.config.instanceId;
    this.callbacks = options;
    this.clock = engine.clock;
    this.logger = options.logger ?? silentLogger;
    this.store = leaseLockTermStore(engine);
  }

  get state(): ElectionState {
    return this.status;
  }

  /** True while this instance leads and the clock is before its trust deadline. */
  isLeader(): boolean {
    return this.held?.isTrusted() ?? false;
  }

  /** The token of the current leadership; null when not leading. */
  get token(): FencingToken | null {
    return this.isLeader() ? (this.held?.token ?? null) : null;
  }

  /** The signal of the current leadership; an aborted signal when not leading. */
  get signal(): AbortSignal {
    const held = this.held;
    return held && held.state === 'held'
      ? held.signal
      : AbortSignal.abort(new AbortedError(`this instance does not lead "${this.name}"`));
  }

  /** Monotonic time (`clock.monotonic()`) until which the leader trusts its term; null when not leading. */
  get trustedUntil(): number | null {
    return this.isLeader() ? (this.held?.trustedUntil ?? null) : null;
  }

  /** The leader last observed by this instance (itself included), without a round trip. */
  get observedLeader(): string | null {
    return this.observed;
  }

  /** Asks the database who leads now; null when nobody holds a live term. */
  async leader(): Promise<LeaderInfo | null> {
    const lease = await this.engine.leaseLockGet({ name: this.config.lockName });
    if (!lease || lease.state !== 'active') return null;
    return {
      instanceId: lease.holder,
      token: lease.token,
      electedAt: lease.acquiredAt,
      expiresAt: lease.expiresAt,
    };
  }

  /**
   * Joins the election. Resolves after the first try, so `isLeader()` already tells whether this
   * instance won it; a failed first try is reported through onError and retried by the loop.
   */
  start(): Promise<void> {
    if (this.status === 'closed') return Promise.reject(new ClosedError(`election "${this.name}"`));
    this.starting ??= this.begin();
    return this.starting;
  }

  /**
   * Leaves the election: aborts the leadership signal, calls onRevoked, releases the term at
   * once (a waiting candidate is woken by the release and takes over without waiting for the
   * expiry) and stops every timer. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** One try to become leader (a no-op while leading). Public so tests can drive the election. */
  async runOnce(): Promise<ElectionAttempt> {
    if (this.status === 'closed') return { outcome: 'closed' };
    if (this.held && this.held.state === 'held')
      return { outcome: 'leading', token: this.held.token };
    this.attempting = true;
    this.wakePending = false;
    try {
      return await this.attempt();
    } finally {
      this.attempting = false;
    }
  }

  /** The delay before the next try; jitter only ever shortens `pollEvery`. */
  nextDelay(result: ElectionAttempt | undefined, failed: boolean): number {
    if (this.wakePending && this.status === 'candidate') return 0;
    const poll = Math.max(1, Math.round(this.config.pollEveryMs * (1 - 0.2 * Math.random())));
    if (failed || result?.outcome !== 'following') return poll;
    // Try again no later than the instant the leader's term runs out if it is not renewed.
    return Math.max(1, Math.min(poll, Math.ceil(result.retryAfterMs)));
  }

  private async begin(): Promise<void> {
    this.status = 'candidate';
    if (this.engine.capabilities.notifications) {
      try {
        this.subscription = await this.engine.notifyListen({
          topic: LOCKS_TOPIC,
          onNotify: (lock) => {
            if (lock === this.config.lockName) this.wake();
          },
          // Notifications may have been lost while the listener was down: look again.
          onReconnect: () => this.wake(),
        });
      } catch (error) {
        this.report(error); // not fatal: polling is the baseline
      }
    }
    let first: ElectionAttempt | undefined;
    try {
      first = await this.runOnce();
    } catch (error) {
      this.report(error);
    }
    if (this.closeController.signal.aborted) return;
    this.loop = new ElectionLoop(this, {
      clock: this.clock,
      logger: this.logger,
      intervalMs: this.config.pollEveryMs,
      firstRunDelayMs: this.nextDelay(first, first === undefined),
    });
    this.loop.start();
  }

  private async attempt(): Promise<ElectionAttempt> {
    const sentAt = this.clock.monotonic();
    const pending = this.engine.leaseLockAcquire({
      name: this.config.lockName,
      holder: this.instanceId,
      ttlMs: this.config.timing.ttlMs,
    });
    const result = await raceAbort(pending, this.closeController.signal);
    if (result === CLOSED || this.status === 'closed') {
      // Closed while the statement was in flight: whatever it took must not linger.
      void pending.then(
        (late) => late.acquired && this.releaseQuietly(late.lease),
        () => {},
      );
      return { outcome: 'closed' };
    }
    if (result.acquired) {
      const trustedUntil = sentAt + this.config.timing.ttlMs - this.config.timing.marginMs;
      if (this.clock.monotonic() >= trustedUntil) {
        // The answer came back too late to be trusted: hand the term back rather than lead blind.
        this.releaseQuietly(result.lease);
        return { outcome: 'following', leader: null, retryAfterMs: 0 };
      }
      this.becomeLeader(result.lease, sentAt);
      return { outcome: 'elected', token: result.lease.token };
    }
    const leader = result.current?.state === 'active' ? result.current.holder : null;
    if (leader !== null) this.observe(leader);
    return { outcome: 'following', leader, retryAfterMs: result.retryAfterMs };
  }

  private becomeLeader(lease: Lease, sentAt: number): void {
    const held: HeldLease = new HeldLease(
      this.store,
      this.clock,
      lease,
      sentAt,
      this.config.timing,
      {
        onLost: (error) => this.revoked(held, error),
        onRenewed: (renewed) =>
          this.tell('renewed', {
            ...this.ids(),
            token: renewed.token,
            trustedUntil: held.trustedUntil,
          }),
        onRenewError: (error) => this.report(error),
      },
    );
    this.held = held;
    this.status = 'leader';
    this.tell('elected', {
      ...this.ids(),
      token: held.token,
      trustedUntil: held.trustedUntil,
    });
    this.call(() => this.callbacks.onElected?.(held.token, held.signal));
    if (this.held === held) this.observe(this.instanceId);
  }

  /** The held lease lost the term (refused renewal, or the trust deadline passed). */
  private revoked(held: HeldLease, reason: LeaseholdError): void {
    if (this.held !== held) return;
    this.held = undefined;
    if (this.status === 'leader') this.status = 'candidate';
    this.tell('revoked', { ...this.ids(), token: held.token, reason });
    this.call(() => this.callbacks.onRevoked?.(reason));
    this.wake();
  }

  private async shutdown(): Promise<void> {
    this.status = 'closed';
    this.closeController.abort(new ClosedError(`election "${this.name}"`));
    const held = this.held;
    this.held = undefined;
    if (held && held.state === 'held') {
      // release() aborts the signal synchronously, then sends the release.
      const released = held.release();
      const reason = held.signal.reason as Error;
      this.tell('revoked', { ...this.ids(), token: held.token, reason });
      this.call(() => this.callbacks.onRevoked?.(reason));
      await released.catch((error: unknown) => this.report(error));
    }
    await this.starting?.catch(() => {});
    await this.loop?.stop();
    await this.subscription?.unsubscribe().catch(() => {});
  }

  private wake(): void {
    if (this.status !== 'candidate') return;
    if (this.attempting || !this.loop) {
      this.wakePending = true;
      return;
    }
    this.loop.poke();
  }

  /** Emits `election:<what>`, and its deprecated alias `elector:<what>` (decision 0235). */
  private tell<K extends keyof ElectionHappenings>(what: K, payload: ElectionHappenings[K]): void {
    this.events.emit(`election:${what}`, payload as ElectionEvents[`election:${K}`]);
    this.events.emitAlias(`elector:${what}`, payload as ElectionEvents[`elector:${K}`]);
  }

  private observe(leader: string): void {
    if (leader === this.observed) return;
    this.observed = leader;
    this.tell('new-leader', { ...this.ids(), leader });
    this.call(() => this.callbacks.onNewLeader?.(leader));
  }

  private releaseQuietly(lease: Lease): void {
    void this.engine
      .leaseLockRelease({ name: lease.resource, holder: lease.holder, token: lease.token })
      .catch((error: unknown) => this.report(error));
  }

  /** Runs a user callback; a throw or a rejected promise is reported, never propagated. */
  private call(fn: () => unknown): void {
    try {
      const value = fn();
      if (value instanceof Promise) value.catch((error: unknown) => this.report(error));
    } catch (error) {
      this.report(error);
    }
  }

  /** Reports a failure; the election carries on. */
  report(error: unknown): void {
    if (this.callbacks.onError) {
      try {
        this.callbacks.onError(error);
      } catch {
        // a throwing error handler must not break the loop either
      }
      return;
    }
    this.logger.warn(
      { election: this.name, err: error },
      `election "${this.name}": ${String(error)}`,
    );
  }

  private ids(): ElectionEventBase {
    return { name: this.name, instanceId: this.instanceId };
  }
}
