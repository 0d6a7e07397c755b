/**
 * Leases over HTTP, with the same promises as the library: `hold()` renews in the background
 * and fires its signal at the trust deadline (`sentAt + ttl - margin`) when renewals stop
 * succeeding, whether the service refused them or simply could not be reached.
 */
import { systemClock, type Clock } from '../core/clock.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import { LeaseHeldError, isLeaseholdError } from '../core/errors.js';
import { HeldLease, type HeldLeaseCallbacks, type LeaseTermStore } from '../core/held-lease.js';
import { trustTiming } from '../core/trust.js';
import type { FencingToken, Lease, LeaseListFilter } from '../core/types.js';
import { LIMITS, requireName } from '../core/validate.js';
import { HttpClient, type HttpClientOptions } from './http.js';

export interface ClientAcquireOptions {
  holder: string;
  ttl: Duration;
  metadata?: Record<string, unknown>;
}

export interface ClientHoldOptions extends ClientAcquireOptions, HeldLeaseCallbacks {
  renewEvery?: Duration;
  margin?: Duration;
}

export interface LeaseClientOptions extends HttpClientOptions {
  clock?: Clock;
}

type Term = Pick<Lease, 'resource' | 'holder' | 'token'>;

export class LeaseClient {
  private readonly http: HttpClient;
  private readonly clock: Clock;

  constructor(options: LeaseClientOptions) {
    this.http = new HttpClient(options);
    this.clock = options.clock ?? systemClock;
  }

  /** Takes the lease, or returns null while someone else holds it. */
  async acquire(resource: string, options: ClientAcquireOptions): Promise<Lease | null> {
    try {
      return await this.acquireOrThrow(resource, options);
    } catch (error) {
      if (isLeaseholdError(error, 'lease_held')) return null;
      throw error;
    }
  }

  async renew(term: Term, options: { ttl?: Duration } = {}): Promise<Lease | null> {
    const body = { resource: term.resource, holder: term.holder, token: term.token } as Record<
      string,
      unknown
    >;
    if (options.ttl !== undefined) body.ttlSeconds = ttlMs(options.ttl) / 1000;
    return this.orNullWhenLost(this.http.request<LeaseWire>('PUT', '/api/leases/renew', body));
  }

  async release(term: Term): Promise<boolean> {
    const body = { resource: term.resource, holder: term.holder, token: term.token };
    const lease = await this.orNullWhenLost(
      this.http.request<LeaseWire>('DELETE', '/api/leases/release', body),
    );
    return lease !== null;
  }

  async list(state: LeaseListFilter = 'all'): Promise<Lease[]> {
    const path = state === 'all' ? '/api/leases' : `/api/leases/${state}`;
    const answer = await this.http.request<{ leases: LeaseWire[] }>('GET', path);
    return answer.body.leases.map(fromWire);
  }

  async getById(id: number): Promise<Lease | null> {
    try {
      return fromWire((await this.http.request<LeaseWire>('GET', `/api/leases/${id}`)).body);
    } catch (error) {
      if (isLeaseholdError(error, 'not_found')) return null;
      throw error;
    }
  }

  /** Acquires and keeps renewing; throws LeaseHeldError while someone else holds it. */
  async hold(resource: string, options: ClientHoldOptions): Promise<HeldLease> {
    const ms = ttlMs(options.ttl);
    const timing = trustTiming(ms, options.renewEvery, options.margin);
    const sentAt = this.clock.monotonic();
    const lease = await this.acquireOrThrow(resource, options);
    return new HeldLease(this.termStore(), this.clock, lease, sentAt, timing, options);
  }

  private async acquireOrThrow(resource: string, options: ClientAcquireOptions): Promise<Lease> {
    requireName('resource', resource);
    requireName('holder', options.holder);
    const body: Record<string, unknown> = {
      resource,
      holder: options.holder,
      ttlSeconds: ttlMs(options.ttl) / 1000,
    };
    if (options.metadata !== undefined) body.metadata = options.metadata;
    try {
      return fromWire((await this.http.request<LeaseWire>('POST', '/api/leases', body)).body);
    } catch (error) {
      if (isLeaseholdError(error, 'lease_held')) {
        const details = error.details as { holder?: string; expiresAt?: string };
        throw new LeaseHeldError(
          resource,
          details.holder ?? '(unknown)',
          new Date(details.expiresAt ?? 0),
        );
      }
      throw error;
    }
  }

  /** The held lease's view of this client: renew and release answer null when lost. */
  private termStore(): LeaseTermStore {
    return {
      leaseRenew: (p: { resource: string; holder: string; token: FencingToken; ttlMs: number }) =>
        this.renew(p, { ttl: p.ttlMs }),
      leaseRelease: (p) => this.release(p),
    };
  }

  private async orNullWhenLost(request: Promise<{ body: LeaseWire }>): Promise<Lease | null> {
    try {
      return fromWire((await request).body);
    } catch (error) {
      if (isLeaseholdError(error, 'lease_lost')) return null;
      throw error;
    }
  }
}

function ttlMs(ttl: Duration): number {
  return toMilliseconds('ttl', ttl, { min: LIMITS.ttlMinMs, max: LIMITS.ttlMaxMs });
}

/** A lease as the service sends it: dates as ISO strings. */
export interface LeaseWire {
  id: number;
  resource: string;
  holder: string;
  token: number;
  metadata: Record<string, unknown> | null;
  state: Lease['state'];
  createdAt: string;
  acquiredAt: string;
  renewedAt: string | null;
  releasedAt: string | null;
  expiresAt: string;
  renewCount: number;
  ttlMs: number;
}

export function fromWire(w: LeaseWire): Lease {
  const date = (s: string | null) => (s === null ? null : new Date(s));
  return {
    ...w,
    createdAt: new Date(w.createdAt),
    acquiredAt: new Date(w.acquiredAt),
    renewedAt: date(w.renewedAt),
    releasedAt: date(w.releasedAt),
    expiresAt: new Date(w.expiresAt),
  };
}
