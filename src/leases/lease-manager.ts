import type { Clock } from '../core/clock.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import type { LeaseLostError } from '../core/errors.js';
import { InvalidArgumentError, LeaseHeldError } from '../core/errors.js';
import {
  LEASE_LIST_FILTERS,
  type FencingToken,
  type Lease,
  type LeaseListFilter,
} from '../core/types.js';
import {
  LIMITS,
  requireJsonObject,
  requireName,
  requireOneOf,
  requireSafeInteger,
} from '../core/validate.js';
import type { Engine, LeaseAcquireResult } from '../engine/engine.js';
import { HeldLease, type HeldLeaseCallbacks } from '../core/held-lease.js';
import { trustTiming } from '../core/trust.js';

export interface AcquireOptions {
  holder: string;
  ttl: Duration;
  metadata?: Record<string, unknown>;
}

export interface HoldOptions extends AcquireOptions, HeldLeaseCallbacks {
  /** How often to renew; default ttl/3. Must be shorter than ttl - margin. */
  renewEvery?: Duration;
  /** Safety gap before the expiry at which the holder stops trusting; default 10% of ttl, ≥ 300 ms. */
  margin?: Duration;
}

/** What protected code receives. */
export interface LeaseContext {
  readonly lease: Lease;
  readonly token: FencingToken;
  readonly signal: AbortSignal;
}

export type WithLeaseResult<T> =
  | { readonly ran: true; readonly value: T }
  | { readonly ran: false; readonly current: Lease | null };

export interface ListOptions {
  state?: LeaseListFilter;
  limit?: number;
  offset?: number;
  resourcePrefix?: string;
}

/** Identifies a lease term: what renew and release are guarded by. */
export type LeaseTerm = Pick<Lease, 'resource' | 'holder' | 'token'> & { ttlMs?: number };

const ttlBounds = { min: LIMITS.ttlMinMs, max: LIMITS.ttlMaxMs };

/**
 * The lease API for application code. It validates every input (so engines never see bad
 * data), turns engine answers into the shapes users want, and builds held leases. It holds no
 * state of its own and works on any engine.
 */
export class LeaseManager {
  constructor(
    private readonly engine: Engine,
    private readonly clock: Clock = engine.clock,
  ) {}

  /** Takes the lease, or returns null while someone else holds it. */
  async acquire(resource: string, options: AcquireOptions): Promise<Lease | null> {
    const result = await this.tryAcquire(resource, options);
    return result.acquired ? result.lease : null;
  }

  /** Like acquire, but tells who holds the lease when it is not free. */
  async tryAcquire(resource: string, options: AcquireOptions): Promise<LeaseAcquireResult> {
    const params = validateAcquire(resource, options);
    return this.engine.leaseAcquire(params);
  }

  /** Extends a lease term; null when it is no longer the caller's. */
  async renew(term: LeaseTerm, options: { ttl?: Duration } = {}): Promise<Lease | null> {
    const { resource, holder, token } = validateTerm(term);
    const ttlMs = toMilliseconds('ttl', options.ttl ?? term.ttlMs, ttlBounds);
    return this.engine.leaseRenew({ resource, holder, token, ttlMs });
  }

  /** Ends a lease term now; false when it was no longer the caller's. */
  async release(term: LeaseTerm): Promise<boolean> {
    const { resource, holder, token } = validateTerm(term);
    return (await this.engine.leaseRelease({ resource, holder, token })) !== null;
  }

  async get(resource: string): Promise<Lease | null> {
    return this.engine.leaseGet({ resource: requireName('resource', resource) });
  }

  async getById(id: number): Promise<Lease | null> {
    return this.engine.leaseGetById({ id: requireSafeInteger('id', id, 1) });
  }

  async list(options: ListOptions = {}): Promise<Lease[]> {
    const filter = requireOneOf('state', options.state ?? 'all', LEASE_LIST_FILTERS);
    const limit = requireSafeInteger('limit', options.limit ?? 100, 1);
    if (limit > LIMITS.listMaxLimit)
      throw new InvalidArgumentError('limit', `must be at most ${LIMITS.listMaxLimit}`);
    const offset = requireSafeInteger('offset', options.offset ?? 0, 0);
    const resourcePrefix =
      options.resourcePrefix === undefined
        ? undefined
        : requireName('resourcePrefix', options.resourcePrefix);
    return this.engine.leaseList({
      filter,
      limit,
      offset,
      ...(resourcePrefix === undefined ? {} : { resourcePrefix }),
    });
  }

  /**
   * Acquires and keeps renewing. Throws LeaseHeldError when someone else holds the lease.
   * The returned lease's signal fires at the trust deadline if renewals stop succeeding.
   */
  async hold(resource: string, options: HoldOptions): Promise<HeldLease> {
    const params = validateAcquire(resource, options);
    const timing = trustTiming(params.ttlMs, options.renewEvery, options.margin);
    const sentAt = this.clock.monotonic();
    const result = await this.engine.leaseAcquire(params);
    if (!result.acquired) {
      const current = result.current;
      throw new LeaseHeldError(
        params.resource,
        current?.holder ?? '(unknown)',
        current?.expiresAt ?? new Date(0),
      );
    }
    return new HeldLease(this.engine, this.clock, result.lease, sentAt, timing, options);
  }

  /**
   * Runs `fn` while holding the lease, then releases it. Skips (ran: false) when someone else
   * holds it. If the lease is lost before `fn` settles, rejects with the LeaseLostError even if
   * `fn` succeeded: its effects may not have been exclusive, and the caller must know.
   */
  async withLease<T>(
    resource: string,
    options: HoldOptions,
    fn: (context: LeaseContext) => Promise<T> | T,
  ): Promise<WithLeaseResult<T>> {
    let held: HeldLease;
    try {
      held = await this.hold(resource, options);
    } catch (error) {
      if (error instanceof LeaseHeldError) {
        return { ran: false, current: await this.engine.leaseGet({ resource }) };
      }
      throw error;
    }
    try {
      const value = await fn({ lease: held.lease, token: held.token, signal: held.signal });
      if (held.state === 'lost') throw held.signal.reason as LeaseLostError;
      return { ran: true, value };
    } finally {
      await held.release().catch(() => false);
    }
  }
}

/** The engine's parameters for an acquire, or an InvalidArgumentError (the service uses it too). */
export function validateAcquire(resource: string, options: AcquireOptions) {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object');
  const params = {
    resource: requireName('resource', resource),
    holder: requireName('holder', options.holder),
    ttlMs: toMilliseconds('ttl', options.ttl, ttlBounds),
  };
  return options.metadata === undefined
    ? params
    : { ...params, metadata: requireJsonObject('metadata', options.metadata) };
}

function validateTerm(term: LeaseTerm) {
  if (typeof term !== 'object' || term === null)
    throw new InvalidArgumentError('lease', 'must be a lease object');
  return {
    resource: requireName('resource', term.resource),
    holder: requireName('holder', term.holder),
    token: requireSafeInteger('token', term.token, 1),
  };
}
