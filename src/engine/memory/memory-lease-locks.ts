/**
 * The lease-lock family in process, with the rules of the PostgreSQL engine's SQL: rows kept
 * forever with their token, the gap after a term decided by that term's `quietMs`/`delayMs`.
 * Each method runs to completion without awaiting, so each is atomic like the statement it
 * mirrors.
 */
import type { Lease } from '../../core/types.js';
import {
  LOCKS_TOPIC,
  type LeaseLockAcquireParams,
  type LeaseLockAcquireResult,
  type LeaseLockOperations,
  type LeaseLockReleaseParams,
  type LeaseLockRenewParams,
} from '../lease-locks.js';
import { byCodePoint } from './code-point-order.js';
import type { MemoryTermHistory } from './memory-term-history.js';

interface LeaseLockRecord extends Omit<Lease, 'state' | 'metadata' | 'resource'> {
  readonly name: string;
  readonly quietMs: number;
  readonly delayMs: number;
}

export class MemoryLeaseLocks implements LeaseLockOperations {
  private readonly leaseLocks = new Map<string, LeaseLockRecord>();
  private nextId = 1;

  constructor(
    private readonly now: () => Date,
    /** Announces a release on topic `locks`, as the releasing SQL does inline. */
    private readonly publish: (topic: string, payload: string) => void,
    private readonly history: MemoryTermHistory,
  ) {}

  async leaseLockAcquire(p: LeaseLockAcquireParams): Promise<LeaseLockAcquireResult> {
    const now = this.now();
    const existing = this.leaseLocks.get(p.name);
    const term = {
      holder: p.holder,
      ttlMs: p.ttlMs,
      quietMs: p.quietMs ?? 0,
      delayMs: p.delayMs ?? 0,
      releasedAt: null,
      expiresAt: new Date(now.getTime() + p.ttlMs),
    };
    if (!existing) {
      const record: LeaseLockRecord = {
        ...term,
        id: this.nextId++,
        name: p.name,
        token: 1,
        createdAt: now,
        acquiredAt: now,
        renewedAt: null,
        renewCount: 0,
      };
      return { acquired: true, lease: this.store(record, now) };
    }
    if (isLive(existing, now) && existing.holder === p.holder) {
      // The live holder again: extend, keep the token.
      const record = { ...existing, ...term, renewedAt: now, renewCount: existing.renewCount + 1 };
      return { acquired: true, lease: this.store(record, now) };
    }
    const freeAt = freeAtMs(existing);
    if (freeAt > now.getTime()) {
      return {
        acquired: false,
        current: view(existing, now),
        retryAfterMs: freeAt - now.getTime(),
      };
    }
    this.history.record('lock', p.name, existing);
    const record: LeaseLockRecord = {
      ...existing,
      ...term,
      token: existing.token + 1,
      acquiredAt: now,
      renewedAt: null,
      renewCount: 0,
    };
    return { acquired: true, lease: this.store(record, now) };
  }

  async leaseLockRenew(p: LeaseLockRenewParams): Promise<Lease | null> {
    const now = this.now();
    const existing = this.owned(p.name, p.holder, p.token, now);
    if (!existing) {
      this.history.supersede('lock', p.name, p.holder, p.token, this.leaseLocks.get(p.name));
      return null;
    }
    return this.store(
      {
        ...existing,
        renewedAt: now,
        renewCount: existing.renewCount + 1,
        ttlMs: p.ttlMs,
        expiresAt: new Date(now.getTime() + p.ttlMs),
      },
      now,
    );
  }

  async leaseLockRelease(p: LeaseLockReleaseParams): Promise<Lease | null> {
    const now = this.now();
    const existing = this.owned(p.name, p.holder, p.token, now);
    if (!existing) return null;
    const endsAt = Math.max(now.getTime(), existing.acquiredAt.getTime() + (p.atLeastMs ?? 0));
    const lease = this.store({ ...existing, releasedAt: now, expiresAt: new Date(endsAt) }, now);
    this.publish(LOCKS_TOPIC, p.name);
    return lease;
  }

  async leaseLockGet(p: { name: string }): Promise<Lease | null> {
    const existing = this.leaseLocks.get(p.name);
    return existing ? view(existing, this.now()) : null;
  }

  async leaseLockList(p: { prefix?: string; limit: number }): Promise<Lease[]> {
    const now = this.now();
    return [...this.leaseLocks.values()]
      .filter((r) => p.prefix === undefined || r.name.startsWith(p.prefix))
      .sort((a, b) => byCodePoint(a.name, b.name))
      .slice(0, p.limit)
      .map((r) => view(r, now));
  }

  private owned(name: string, holder: string, token: number, now: Date) {
    const r = this.leaseLocks.get(name);
    return r && isLive(r, now) && r.holder === holder && r.token === token ? r : undefined;
  }

  private store(record: LeaseLockRecord, now: Date): Lease {
    this.leaseLocks.set(record.name, record);
    return view(record, now);
  }
}

function isLive(r: LeaseLockRecord, now: Date): boolean {
  return r.releasedAt === null && r.expiresAt.getTime() > now.getTime();
}

/** When the term stops blocking others (the FREE_AT expression of lock-queries). */
function freeAtMs(r: LeaseLockRecord): number {
  const gap = r.releasedAt === null ? Math.max(r.quietMs, r.delayMs) : r.quietMs;
  return r.expiresAt.getTime() + gap;
}

function view(r: LeaseLockRecord, now: Date): Lease {
  const state = r.releasedAt ? 'released' : isLive(r, now) ? 'active' : 'expired';
  return {
    id: r.id,
    resource: r.name,
    holder: r.holder,
    token: r.token,
    metadata: null,
    createdAt: r.createdAt,
    acquiredAt: r.acquiredAt,
    renewedAt: r.renewedAt,
    releasedAt: r.releasedAt,
    expiresAt: r.expiresAt,
    renewCount: r.renewCount,
    ttlMs: r.ttlMs,
    state,
  };
}
