import type { Lease } from '../../core/types.js';
import type {
  LeaseAcquireParams,
  LeaseAcquireResult,
  LeaseListParams,
  LeaseReleaseByIdParams,
  LeaseReleaseParams,
  LeaseRenewParams,
  LeaseOperations,
  LeaseTermListParams,
  LeaseTermPruneParams,
} from '../leases.js';
import type { RecordedTerm } from '../../core/lease-terms.js';
import type { MemoryTermHistory } from './memory-term-history.js';

/** A lease row as the memory engine keeps it; `state` is derived on every read. */
type LeaseRecord = Omit<Lease, 'state'>;

/**
 * The lease family over a Map, with the same rules as the SQL: a lease row per resource kept
 * forever, a token bumped on every new term, and every guard evaluated against `now()`.
 * JavaScript runs each method to completion, so each one is atomic like the single statement
 * it mirrors.
 */
export class MemoryLeases implements LeaseOperations {
  private readonly byResource = new Map<string, LeaseRecord>();
  private nextId = 1;

  constructor(
    private readonly now: () => Date,
    private readonly history: MemoryTermHistory,
  ) {}

  async leaseAcquire(p: LeaseAcquireParams): Promise<LeaseAcquireResult> {
    const now = this.now();
    const existing = this.byResource.get(p.resource);
    const expiresAt = new Date(now.getTime() + p.ttlMs);
    if (!existing) {
      const record: LeaseRecord = {
        id: this.nextId++,
        resource: p.resource,
        holder: p.holder,
        token: 1,
        metadata: copy(p.metadata ?? null),
        createdAt: now,
        acquiredAt: now,
        renewedAt: null,
        releasedAt: null,
        expiresAt,
        renewCount: 0,
        ttlMs: p.ttlMs,
      };
      this.byResource.set(p.resource, record);
      return { acquired: true, lease: view(record, now) };
    }
    const live = isLive(existing, now);
    if (live && existing.holder === p.holder) {
      // Idempotent re-acquire by the live holder: extend, keep the token.
      const record: LeaseRecord = {
        ...existing,
        renewedAt: now,
        renewCount: existing.renewCount + 1,
        metadata: p.metadata == null ? existing.metadata : copy(p.metadata),
        ttlMs: p.ttlMs,
        expiresAt,
      };
      this.byResource.set(p.resource, record);
      return { acquired: true, lease: view(record, now) };
    }
    if (live) return { acquired: false, current: view(existing, now) };
    this.history.record('lease', p.resource, existing);
    const record: LeaseRecord = {
      ...existing,
      holder: p.holder,
      token: existing.token + 1,
      metadata: copy(p.metadata ?? null),
      acquiredAt: now,
      renewedAt: null,
      releasedAt: null,
      renewCount: 0,
      ttlMs: p.ttlMs,
      expiresAt,
    };
    this.byResource.set(p.resource, record);
    return { acquired: true, lease: view(record, now) };
  }

  async leaseRenew(p: LeaseRenewParams): Promise<Lease | null> {
    const now = this.now();
    const existing = this.byResource.get(p.resource);
    if (!existing || !ownedLive(existing, p.holder, p.token, now)) {
      this.history.supersede('lease', p.resource, p.holder, p.token, existing);
      return null;
    }
    const record: LeaseRecord = {
      ...existing,
      renewedAt: now,
      renewCount: existing.renewCount + 1,
      ttlMs: p.ttlMs,
      expiresAt: new Date(now.getTime() + p.ttlMs),
    };
    this.byResource.set(p.resource, record);
    return view(record, now);
  }

  async leaseRelease(p: LeaseReleaseParams): Promise<Lease | null> {
    const now = this.now();
    const existing = this.byResource.get(p.resource);
    if (!existing || !ownedLive(existing, p.holder, p.token, now)) return null;
    return this.markReleased(existing, now);
  }

  async leaseReleaseById(p: LeaseReleaseByIdParams): Promise<Lease | null> {
    const now = this.now();
    const existing = this.findById(p.id);
    if (!existing || !isLive(existing, now)) return null;
    if (p.holder !== undefined && existing.holder !== p.holder) return null;
    if (p.token !== undefined && existing.token !== p.token) return null;
    return this.markReleased(existing, now);
  }

  // The many-lease calls are the single calls in input order: each runs to completion before
  // the next starts, which is the contract's "as if one after another".
  async leaseAcquireMany(ps: readonly LeaseAcquireParams[]): Promise<LeaseAcquireResult[]> {
    return inOrder(ps, (p) => this.leaseAcquire(p));
  }

  async leaseRenewMany(ps: readonly LeaseRenewParams[]): Promise<(Lease | null)[]> {
    return inOrder(ps, (p) => this.leaseRenew(p));
  }

  async leaseReleaseMany(ps: readonly LeaseReleaseParams[]): Promise<(Lease | null)[]> {
    return inOrder(ps, (p) => this.leaseRelease(p));
  }

  async leaseGet(p: { resource: string }): Promise<Lease | null> {
    const existing = this.byResource.get(p.resource);
    return existing ? view(existing, this.now()) : null;
  }

  async leaseGetById(p: { id: number }): Promise<Lease | null> {
    const existing = this.findById(p.id);
    return existing ? view(existing, this.now()) : null;
  }

  async leaseList(p: LeaseListParams): Promise<Lease[]> {
    const now = this.now();
    const matches = [...this.byResource.values()]
      .filter((r) => p.resourcePrefix === undefined || r.resource.startsWith(p.resourcePrefix))
      .filter((r) => {
        switch (p.filter) {
          case 'all':
            return true;
          case 'active':
            return isLive(r, now);
          case 'expired':
            return r.releasedAt === null && !isLive(r, now);
          case 'renewed':
            return r.renewCount > 0;
          case 'released':
            return r.releasedAt !== null;
        }
      })
      .sort((a, b) => a.id - b.id);
    return matches.slice(p.offset, p.offset + p.limit).map((r) => view(r, now));
  }

  async leaseCountActive(): Promise<number> {
    const now = this.now();
    let active = 0;
    for (const record of this.byResource.values()) if (isLive(record, now)) active++;
    return active;
  }

  async leaseTermList(p: LeaseTermListParams): Promise<RecordedTerm[]> {
    return this.history.list(p);
  }

  async leaseTermPrune(p: LeaseTermPruneParams): Promise<number> {
    return this.history.prune(p, this.now());
  }

  async leaseTermRecording(): Promise<boolean> {
    return this.history.recordingLeases;
  }

  async leaseTermRecordingSet(p: { enabled: boolean }): Promise<void> {
    this.history.recordingLeases = p.enabled;
  }

  private markReleased(existing: LeaseRecord, now: Date): Lease {
    const record: LeaseRecord = {
      ...existing,
      releasedAt: now,
      expiresAt: existing.expiresAt.getTime() < now.getTime() ? existing.expiresAt : now,
    };
    this.byResource.set(existing.resource, record);
    return view(record, now);
  }

  private findById(id: number): LeaseRecord | undefined {
    for (const r of this.byResource.values()) if (r.id === id) return r;
    return undefined;
  }
}

async function inOrder<P, R>(ps: readonly P[], one: (p: P) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const p of ps) results.push(await one(p));
  return results;
}

function isLive(r: LeaseRecord, now: Date): boolean {
  return r.releasedAt === null && r.expiresAt.getTime() > now.getTime();
}

function ownedLive(r: LeaseRecord, holder: string, token: number | undefined, now: Date): boolean {
  return isLive(r, now) && r.holder === holder && (token === undefined || r.token === token);
}

function view(r: LeaseRecord, now: Date): Lease {
  const state = r.releasedAt ? 'released' : isLive(r, now) ? 'active' : 'expired';
  return { ...r, metadata: copy(r.metadata), state };
}

/** Callers must not be able to mutate stored state through a returned object, nor vice versa. */
function copy<T>(value: T): T {
  return value === null || value === undefined ? value : structuredClone(value);
}
