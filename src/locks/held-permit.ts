/**
 * A semaphore permit as its holder keeps it: the token, a signal, and `release()`.
 *
 * The term is kept by the held-lease machinery (src/core/held-lease.ts), so a permit is trusted
 * exactly as a lease is: until `sentAt + ttl - margin` of the acquire or renewal that last
 * succeeded, with its own timer aborting the signal at that deadline if renewals stall (or, for
 * a permit that is not renewed, when its one term runs out). A permit maps one-to-one onto the
 * Lease values the held lease keeps (the slot rides in `id`), so nothing there is duplicated.
 */
import type { Clock } from '../core/clock.js';
import type { LeaseLostError } from '../core/errors.js';
import { HeldLease, type HeldLeaseState, type LeaseTermStore } from '../core/held-lease.js';
import type { TrustTiming } from '../core/trust.js';
import type { FencingToken, Lease, SemaphorePermit } from '../core/types.js';
import type { Engine } from '../engine/engine.js';

export interface HeldPermitCallbacks {
  /** The permit was lost (renewal refused, or its trust deadline passed); called once. */
  onLost?: (error: LeaseLostError) => void;
  onRenewed?: (permit: SemaphorePermit) => void;
  /** A renewal failed for a transient reason; the permit is still trusted until its deadline. */
  onRenewError?: (error: unknown) => void;
}

export class HeldPermit {
  readonly name: string;
  readonly slot: number;
  readonly holder: string;
  readonly token: FencingToken;
  private readonly held: HeldLease;

  constructor(
    engine: Engine,
    clock: Clock,
    permit: SemaphorePermit,
    sentAt: number,
    timing: TrustTiming,
    callbacks: HeldPermitCallbacks = {},
  ) {
    this.name = permit.name;
    this.slot = permit.slot;
    this.holder = permit.holder;
    this.token = permit.token;
    const { name, slot } = permit;
    const store: LeaseTermStore = {
      leaseRenew: async (p) => {
        const renewed = await engine.semaphoreRenew({ name, slot, ...pick(p), ttlMs: p.ttlMs });
        return renewed && asLease(renewed);
      },
      leaseRelease: (p) => engine.semaphoreRelease({ name, slot, ...pick(p) }),
    };
    this.held = new HeldLease(store, clock, asLease(permit), sentAt, timing, {
      ...(callbacks.onLost ? { onLost: callbacks.onLost } : {}),
      ...(callbacks.onRenewError ? { onRenewError: callbacks.onRenewError } : {}),
      ...(callbacks.onRenewed
        ? { onRenewed: (lease: Lease) => callbacks.onRenewed?.(asPermit(lease)) }
        : {}),
    });
  }

  /** The permit as last confirmed by the engine. */
  get permit(): SemaphorePermit {
    return asPermit(this.held.lease);
  }

  get state(): HeldLeaseState {
    return this.held.state;
  }

  /** Aborts when the permit is lost (LeaseLostError) or released (AbortedError). */
  get signal(): AbortSignal {
    return this.held.signal;
  }

  /** Monotonic time (clock.monotonic()) until which the holder may act on the permit. */
  get trustedUntil(): number {
    return this.held.trustedUntil;
  }

  /** Held and before the trust deadline: checks the clock, not just a flag. */
  isHeld(): boolean {
    return this.held.isTrusted();
  }

  /** Frees the slot at once; true when the engine confirmed the permit was still ours. */
  release(): Promise<boolean> {
    return this.held.release();
  }

  /** Ends the permit as lost and frees its slot (HeldLease.relinquish, for `lh.close()`). */
  relinquish(why: string): Promise<boolean> {
    return this.held.relinquish(why);
  }
}

function pick(p: { holder: string; token: FencingToken }): { holder: string; token: number } {
  return { holder: p.holder, token: p.token };
}

function asLease(p: SemaphorePermit): Lease {
  return {
    id: p.slot,
    resource: p.name,
    holder: p.holder,
    token: p.token,
    metadata: null,
    createdAt: p.acquiredAt,
    acquiredAt: p.acquiredAt,
    renewedAt: p.renewedAt,
    releasedAt: p.releasedAt,
    expiresAt: p.expiresAt,
    renewCount: p.renewCount,
    ttlMs: p.ttlMs,
    state: p.state,
  };
}

function asPermit(l: Lease): SemaphorePermit {
  return {
    name: l.resource,
    slot: l.id,
    holder: l.holder,
    token: l.token,
    acquiredAt: l.acquiredAt,
    renewedAt: l.renewedAt,
    releasedAt: l.releasedAt,
    expiresAt: l.expiresAt,
    renewCount: l.renewCount,
    ttlMs: l.ttlMs,
    state: l.state,
  };
}
