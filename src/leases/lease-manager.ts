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
import { HeldLease, type HeldLeaseCallbacks, type LeaseTermStore } from '../core/held-lease.js';
import { HeldTerms } from '../core/held-terms.js';
import { trustTiming } from '../core/trust.js';
import { termsLimit, termsTimeline, type LeaseTermView } from '../core/lease-terms.js';
import { leaseCoalescers, type LeaseCoalescers } from './lease-coalescers.js';

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

/** A holder's live lease without its token: for clients of the seed's HTTP API (see renewAsHolder). */
export type HolderRef = Pick<Lease, 'resource' | 'holder'>;

/** Whose lease `releaseById` may end: omit both to end whoever's it is (an administrator's act). */
export interface ReleaseByIdOptions {
  holder?: string;
  token?: FencingToken;
}

const ttlBounds = { min: LIMITS.ttlMinMs, max: LIMITS.ttlMaxMs };

/**
 * The lease API for application code. It validates every input (so engines never see bad
 * data), turns engine answers into the shapes users want, and builds held leases. It works on
 * any engine. Acquires, renews and releases made at the same time, by any of its callers and by
 * the held leases it built, share statements (lease-coalescers.ts; one set per manager): a call
 * alone still goes at once on its own.
 */
export class LeaseManager {
  private readonly coalesced: LeaseCoalescers;
  /** Where held leases renew and release: through the same coalescers. */
  private readonly termStore: LeaseTermStore;

  constructor(
    private readonly engine: Engine,
    private readonly clock: Clock = engine.clock,
    /** Where held leases are kept for `lh.close()` to release (decision 0285). */
    private readonly heldTerms: HeldTerms = new HeldTerms(),
  ) {
    this.coalesced = leaseCoalescers(engine);
    const { renew, release } = this.coalesced;
    this.termStore = { leaseRenew: (p) => renew.run(p), leaseRelease: (p) => release.run(p) };
  }

  /** Takes the lease, or returns null while someone else holds it. */
  async acquire(resource: string, options: AcquireOptions): Promise<Lease | null> {
    const result = await this.tryAcquire(resource, options);
    return result.acquired ? result.lease : null;
  }

  /** Like acquire, but tells who holds the lease when it is not free. */
  async tryAcquire(resource: string, options: AcquireOptions): Promise<LeaseAcquireResult> {
    const params = validateAcquire(resource, options);
    return this.coalesced.acquire.run(params);
  }

  /** Extends a lease term; null when it is no longer the caller's. */
  async renew(term: LeaseTerm, options: { ttl?: Duration } = {}): Promise<Lease | null> {
    const { resource, holder, token } = validateTerm(term);
    const ttlMs = toMilliseconds('ttl', options.ttl ?? term.ttlMs, ttlBounds);
    return this.coalesced.renew.run({ resource, holder, token, ttlMs });
  }

  /** Ends a lease term now; false when it was no longer the caller's. */
  async release(term: LeaseTerm): Promise<boolean> {
    return (await this.releaseTerm(term)) !== null;
  }

  /**
   * Extends `holder`'s live lease on `resource` whatever its token: guarded by the holder alone.
   * Only for clients of the seed's HTTP API, which never saw a token; anyone who has the term
   * calls `renew`, which a newer term of the same holder refuses.
   */
  async renewAsHolder(ref: HolderRef, options: { ttl: Duration }): Promise<Lease | null> {
    const { resource, holder } = validateHolder(ref);
    const ttlMs = toMilliseconds('ttl', options.ttl, ttlBounds);
    return this.coalesced.renew.run({ resource, holder, ttlMs });
  }

  /** Ends `holder`'s live lease on `resource` whatever its token; the lease, or null (see renewAsHolder). */
  async releaseAsHolder(ref: HolderRef): Promise<Lease | null> {
    return this.coalesced.release.run(validateHolder(ref));
  }

  /** Like `release`, but answers the released lease (null when it was no longer the caller's). */
  async releaseTerm(term: LeaseTerm): Promise<Lease | null> {
    const { resource, holder, token } = validateTerm(term);
    return this.coalesced.release.run({ resource, holder, token });
  }

  /**
   * Ends the live lease with this id: the holder's own (give `holder`, and `token` to guard the
   * term), or whoever's it is when both are omitted (an administrator's act: authorise it first).
   */
  async releaseById(id: number, options: ReleaseByIdOptions = {}): Promise<Lease | null> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'must be an object { holder?, token? }');
    return this.engine.leaseReleaseById({
      id: requireSafeInteger('id', id, 1),
      ...(options.holder === undefined ? {} : { holder: requireName('holder', options.holder) }),
      ...(options.token === undefined
        ? {}
        : { token: requireSafeInteger('token', options.token, 1) }),
    });
  }

  /** How many leases are live right now, counted in the engine (a list stops at its page). */
  async countActive(): Promise<number> {
    return this.engine.leaseCountActive();
  }

  async get(resource: string): Promise<Lease | null> {
    return this.engine.leaseGet({ resource: requireName('resource', resource) });
  }

  async getById(id: number): Promise<Lease | null> {
    return this.engine.leaseGetById({ id: requireSafeInteger('id', id, 1) });
  }

  /**
   * The terms of `resource`, newest first (decision 0267): the current one (held, released or
   * expired) and the ones before it, each with its holder, token, start, end and how it ended
   * (`released`, `expired`, `superseded`), and whether it was a takeover. Only the current
   * term is known until recording is turned on (setTermRecording: it costs every acquire that
   * starts a new term a row written). Terms are kept for the maintainer's term retention
   * (default 7 days, at most 100 per resource). An unknown resource has no terms: an empty list.
   */
  async terms(resource: string, options?: { limit?: number }): Promise<LeaseTermView[]> {
    const name = requireName('resource', resource);
    const limit = termsLimit(options);
    // The row first: a term that ends between the two reads is then among the recorded ones,
    // and termsTimeline keeps one copy of each token (read the other way round, it would be
    // missing from both).
    const current = await this.engine.leaseGet({ resource: name });
    const recorded = await this.engine.leaseTermList({ kind: 'lease', resource: name, limit });
    return termsTimeline(current, recorded, limit);
  }

  /** Whether lease terms are being recorded: a setting of the database, off at first. */
  async termRecording(): Promise<boolean> {
    return this.engine.leaseTermRecording();
  }

  /**
   * Turns the recording of lease terms on or off for every instance on this database (on
   * PostgreSQL: ALTER TABLE … ENABLE/DISABLE TRIGGER, so the role must own the tables, as the
   * migrating role does). Elections and lease locks always record their terms.
   */
  async setTermRecording(enabled: boolean): Promise<void> {
    if (typeof enabled !== 'boolean')
      throw new InvalidArgumentError('enabled', `must be a boolean, got ${typeof enabled}`);
    await this.engine.leaseTermRecordingSet({ enabled });
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
    const result = await this.coalesced.acquire.run(params);
    if (!result.acquired) {
      const current = result.current;
      throw new LeaseHeldError(
        params.resource,
        current?.holder ?? '(unknown)',
        current?.expiresAt ?? new Date(0),
      );
    }
    return this.heldTerms.track(
      new HeldLease(this.termStore, this.clock, result.lease, sentAt, timing, options),
    );
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

function validateHolder(ref: HolderRef) {
  if (typeof ref !== 'object' || ref === null)
    throw new InvalidArgumentError('lease', 'must be an object { resource, holder }');
  return {
    resource: requireName('resource', ref.resource),
    holder: requireName('holder', ref.holder),
  };
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
