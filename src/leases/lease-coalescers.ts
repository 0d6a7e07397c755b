/**
 * Concurrent acquires, renews and releases share statements (runtime/coalescer.ts, decision
 * 0404): a request alone goes at once on its own; requests that arrive while one of their kind
 * is in flight go together through the engine's many-lease calls, never two for one resource
 * in one list. Renews, which callers repeat in turn, gather their callers for up to 1 ms
 * (decision 0216). Owned by `LeaseManager`, so every caller of `lh.leases` (the HTTP service
 * among them) shares one set per Leasehold, as every `lh.queue()` shares one single-enqueue
 * coalescer (decision 0231).
 */
import type { Lease } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import { Coalescer } from '../runtime/coalescer.js';

type AcquireParams = Parameters<Engine['leaseAcquire']>[0];
type AcquireResult = Awaited<ReturnType<Engine['leaseAcquire']>>;
type RenewParams = Parameters<Engine['leaseRenew']>[0];
type ReleaseParams = Parameters<Engine['leaseRelease']>[0];

export interface LeaseCoalescers {
  readonly acquire: Coalescer<AcquireParams, AcquireResult>;
  readonly renew: Coalescer<RenewParams, Lease | null>;
  readonly release: Coalescer<ReleaseParams, Lease | null>;
}

/** How long a list of renews waits for the callers it just answered to ask again. */
const RENEW_GATHER_MS = 1;

export function leaseCoalescers(engine: Engine): LeaseCoalescers {
  const coalesced = <P extends { resource: string }, R>(
    one: (p: P) => Promise<R>,
    many: (ps: readonly P[]) => Promise<R[]>,
    gatherMs = 0,
  ): Coalescer<P, R> => new Coalescer({ one, many, key: (p) => p.resource, gatherMs });
  return {
    acquire: coalesced(
      (p: AcquireParams) => engine.leaseAcquire(p),
      (ps) => engine.leaseAcquireMany(ps),
    ),
    renew: coalesced(
      (p: RenewParams) => engine.leaseRenew(p),
      (ps) => engine.leaseRenewMany(ps),
      RENEW_GATHER_MS,
    ),
    release: coalesced(
      (p: ReleaseParams) => engine.leaseRelease(p),
      (ps) => engine.leaseReleaseMany(ps),
    ),
  };
}
