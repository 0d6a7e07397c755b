/**
 * The lock family in process, with the same rules as the SQL of the PostgreSQL engine: lease
 * lock rows kept forever with their token, the gap after a term decided by that term's
 * `quietMs`/`delayMs`, slots claimed once, fences keeping the newest token. Each method runs to
 * completion without awaiting, so each is atomic like the statement it mirrors.
 */
import { StaleTokenError, UnsupportedError } from '../../core/errors.js';
import type { FencingToken, Lease } from '../../core/types.js';
import {
  LOCKS_TOPIC,
  type ConnectionLock,
  type ConnectionLockParams,
  type ConnectionLockWaitParams,
  type FenceCheckParams,
  type LeaseLockAcquireParams,
  type LeaseLockAcquireResult,
  type LeaseLockReleaseParams,
  type LeaseLockRenewParams,
  type LockOperations,
  type ScheduleSlot,
  type ScheduleSlotClaimParams,
  type ScheduleSummary,
  type SessionLock,
} from '../locks.js';
import { MemoryConnectionLocks } from './memory-connection-locks.js';

interface LeaseLockRecord extends Omit<Lease, 'state' | 'metadata' | 'resource'> {
  readonly name: string;
  readonly quietMs: number;
  readonly delayMs: number;
}

export class MemoryLocks implements LockOperations {
  private readonly connectionLocks = new MemoryConnectionLocks();
  private readonly leaseLocks = new Map<string, LeaseLockRecord>();
  private readonly slots = new Map<string, Map<number, ScheduleSlot>>();
  private readonly fences = new Map<string, FencingToken>();
  private nextId = 1;

  constructor(
    private readonly now: () => Date,
    /** Announces a release on topic `locks`, as the releasing SQL does inline. */
    private readonly publish: (topic: string, payload: string) => void,
  ) {}

  async advisoryTryLock(p: ConnectionLockParams): Promise<ConnectionLock | null> {
    return this.connectionLocks.tryTake('advisory', p.name);
  }

  advisoryLock(p: ConnectionLockWaitParams): Promise<ConnectionLock> {
    return this.connectionLocks.take('advisory', p.name, p.signal);
  }

  async sessionLockTryAcquire(p: ConnectionLockParams): Promise<SessionLock | null> {
    return this.connectionLocks.tryTake('session', p.name) as SessionLock | null;
  }

  sessionLockAcquire(p: ConnectionLockWaitParams): Promise<SessionLock> {
    return this.connectionLocks.take('session', p.name, p.signal);
  }

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
    if (!existing) return null;
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

  async scheduleSlotClaim(p: ScheduleSlotClaimParams): Promise<ScheduleSlot | null> {
    const now = this.now();
    if (p.slot.getTime() > now.getTime()) return null;
    let slots = this.slots.get(p.name);
    if (!slots) this.slots.set(p.name, (slots = new Map()));
    if (slots.has(p.slot.getTime())) return null;
    const claim: ScheduleSlot = {
      name: p.name,
      slot: new Date(p.slot.getTime()),
      holder: p.holder,
      token: p.token ?? null,
      claimedAt: now,
      nextSlot: p.nextSlot ? new Date(p.nextSlot.getTime()) : null,
    };
    slots.set(p.slot.getTime(), claim);
    return { ...claim };
  }

  async scheduleSlotList(p: { name: string; limit: number }): Promise<ScheduleSlot[]> {
    const slots = [...(this.slots.get(p.name)?.values() ?? [])];
    return slots
      .sort((a, b) => b.slot.getTime() - a.slot.getTime())
      .slice(0, p.limit)
      .map((s) => ({ ...s }));
  }

  async scheduleSlotPrune(p: { name: string; before: Date }): Promise<number> {
    const slots = this.slots.get(p.name);
    let pruned = 0;
    for (const at of [...(slots?.keys() ?? [])]) {
      if (at < p.before.getTime() && slots?.delete(at)) pruned++;
    }
    return pruned;
  }

  async scheduleList(p: { limit: number }): Promise<ScheduleSummary[]> {
    const summaries: ScheduleSummary[] = [];
    for (const [name, slots] of this.slots) {
      let newest: ScheduleSlot | undefined;
      for (const s of slots.values())
        if (!newest || s.slot.getTime() > newest.slot.getTime()) newest = s;
      if (!newest) continue; // every slot pruned
      const { slot, ...rest } = newest;
      summaries.push({ ...rest, name, lastSlot: slot, runs: slots.size });
    }
    return summaries.sort((a, b) => byCodePoint(a.name, b.name)).slice(0, p.limit);
  }

  async fenceCheck(p: FenceCheckParams): Promise<void> {
    if (p.tx) throw new UnsupportedError('the memory engine cannot join a caller transaction');
    const newest = this.fences.get(p.scope);
    if (newest !== undefined && newest > p.token)
      throw new StaleTokenError(p.scope, p.token, newest);
    this.fences.set(p.scope, p.token);
  }

  async fenceGet(p: { scope: string }): Promise<FencingToken | null> {
    return this.fences.get(p.scope) ?? null;
  }

  close(error: Error): void {
    this.connectionLocks.close(error);
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

/** Code point order, as PostgreSQL's `COLLATE "C"` on UTF-8 (and unlike UTF-16 code units). */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
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
