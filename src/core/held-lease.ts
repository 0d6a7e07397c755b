/**
 * A lease held in the background: renewed on a timer, trusted only until its trust deadline.
 *
 * States: held -> lost | released. Both ends are final.
 * - held: a renewal is scheduled every `renewEvery`; each success moves the trust deadline to
 *   `sentAt + ttl - margin`. A failed renewal (database unreachable) is retried sooner, but
 *   never moves the deadline.
 * - lost: the deadline timer fired, or a renewal was refused (expired, released, taken over).
 *   The signal aborts with a LeaseLostError and `onLost` is called once. A renewal that succeeds
 *   after the deadline is not believed: the lease is released so others need not wait.
 * - released: `release()` was called; the signal aborts (AbortedError) so protected work stops.
 *
 * The abort is fired by its own timer, not by the renew path, so a renewal that hangs on a dead
 * connection cannot delay it.
 */
import type { Clock, Timer } from './clock.js';
import { AbortedError, LeaseLostError } from './errors.js';
import type { FencingToken, Lease } from './types.js';
import type { TrustTiming } from './trust.js';

/**
 * Where a held lease renews and releases its term: an engine (in process) or the HTTP lease
 * client (over the network). Both answer null when the term is no longer the holder's.
 */
export interface LeaseTermStore {
  leaseRenew(params: {
    resource: string;
    holder: string;
    token: FencingToken;
    ttlMs: number;
  }): Promise<Lease | null>;
  /** Truthy when the term was still the holder's and is now released. */
  leaseRelease(params: { resource: string; holder: string; token: FencingToken }): Promise<unknown>;
}

export type HeldLeaseState = 'held' | 'lost' | 'released';

export interface HeldLeaseCallbacks {
  onLost?: (error: LeaseLostError) => void;
  onRenewed?: (lease: Lease) => void;
  /** A renewal attempt failed for a transient reason; the lease is still trusted until its deadline. */
  onRenewError?: (error: unknown) => void;
}

export class HeldLease {
  readonly resource: string;
  readonly holder: string;
  readonly token: FencingToken;
  private current: Lease;
  private status: HeldLeaseState = 'held';
  private trustDeadline: number;
  private deadlineTimer: Timer | undefined;
  private renewTimer: Timer | undefined;
  private readonly controller = new AbortController();

  constructor(
    private readonly store: LeaseTermStore,
    private readonly clock: Clock,
    lease: Lease,
    sentAt: number,
    private readonly timing: TrustTiming,
    private readonly callbacks: HeldLeaseCallbacks = {},
  ) {
    this.resource = lease.resource;
    this.holder = lease.holder;
    this.token = lease.token;
    this.current = lease;
    this.trustDeadline = sentAt + timing.ttlMs - timing.marginMs;
    this.armDeadline();
    this.scheduleRenewal(timing.renewEveryMs);
  }

  /** The lease as last confirmed by the engine. */
  get lease(): Lease {
    return this.current;
  }

  get state(): HeldLeaseState {
    return this.status;
  }

  /** Aborts when the lease is lost or released; `signal.reason` says which. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Monotonic time (clock.monotonic()) until which the holder may act on the lease. */
  get trustedUntil(): number {
    return this.trustDeadline;
  }

  /** True while held and before the trust deadline: checks the clock, not just a flag. */
  isTrusted(): boolean {
    return this.status === 'held' && this.clock.monotonic() < this.trustDeadline;
  }

  /**
   * Ends the term as lost, for a holder going away while work may still run under it
   * (`lh.close()`, decision 0285): the signal aborts with a LeaseLostError saying `why` and
   * `onLost` is called, as when a renewal is refused; then the term is released, so the next
   * holder need not wait for its expiry. Resolves true if the engine confirmed we still held it.
   */
  async relinquish(why: string): Promise<boolean> {
    if (this.status !== 'held') return false;
    this.lose(why);
    return this.releaseStored();
  }

  /** Stops renewing and releases at once. Resolves true if the engine confirmed we still held it. */
  async release(): Promise<boolean> {
    if (this.status !== 'held') return false;
    this.finish(
      'released',
      new AbortedError(`lease on "${this.resource}" was released by its holder`),
    );
    return this.releaseStored();
  }

  /** Releases the stored term; true when the engine confirmed it was still ours. */
  private async releaseStored(): Promise<boolean> {
    return Boolean(
      await this.store.leaseRelease({
        resource: this.resource,
        holder: this.holder,
        token: this.token,
      }),
    );
  }

  private armDeadline(): void {
    this.deadlineTimer?.cancel();
    const delay = this.trustDeadline - this.clock.monotonic();
    this.deadlineTimer = this.clock.setTimer(delay, () =>
      this.lose('the trust deadline passed without a confirmed renewal'),
    );
  }

  private scheduleRenewal(delayMs: number): void {
    this.renewTimer?.cancel();
    this.renewTimer = this.clock.setTimer(delayMs, () => void this.renewOnce());
  }

  private async renewOnce(): Promise<void> {
    if (this.status !== 'held') return;
    const sentAt = this.clock.monotonic();
    let renewed: Lease | null;
    try {
      renewed = await this.store.leaseRenew({
        resource: this.resource,
        holder: this.holder,
        token: this.token,
        ttlMs: this.timing.ttlMs,
      });
    } catch (error) {
      if (this.status !== 'held') return;
      safely(() => this.callbacks.onRenewError?.(error));
      // Retry sooner than the normal cadence; the deadline timer still bounds how long we trust.
      this.scheduleRenewal(
        Math.max(1, Math.min(this.timing.renewEveryMs, Math.floor(this.timing.marginMs / 2) || 1)),
      );
      return;
    }
    // `this.state` (not `this.status`): the status may have changed while the renewal was in flight.
    if (this.state === 'lost' && renewed) {
      // Renewed too late to be trusted: hand the lease back instead of leaving it to expire.
      void this.releaseStored().catch(() => {});
      return;
    }
    if (this.state !== 'held') return;
    if (!renewed) {
      this.lose('the renewal was refused: the lease expired, was released or was taken over');
      return;
    }
    this.current = renewed;
    this.trustDeadline = sentAt + this.timing.ttlMs - this.timing.marginMs;
    this.armDeadline();
    this.scheduleRenewal(this.timing.renewEveryMs);
    safely(() => this.callbacks.onRenewed?.(renewed));
  }

  private lose(reason: string): void {
    if (this.status !== 'held') return;
    const error = new LeaseLostError(this.resource, reason);
    this.finish('lost', error);
    safely(() => this.callbacks.onLost?.(error));
  }

  private finish(state: HeldLeaseState, reason: Error): void {
    this.status = state;
    this.deadlineTimer?.cancel();
    this.renewTimer?.cancel();
    this.controller.abort(reason);
  }
}

/** User callbacks must not break the renew loop. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // deliberately ignored: a throwing callback is the caller's bug, not a reason to lose a lease
  }
}
