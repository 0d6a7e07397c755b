/**
 * The semaphore family in process, with the rules of the PostgreSQL engine's SQL: one record per
 * slot, free when it expired or was released (`expiresAt <= now`), the lowest free slot below
 * `permits` taken first, one token counter per name. Each method runs to completion without
 * awaiting, so each is atomic like the statement it mirrors.
 */
import type { SemaphorePermit } from '../../core/types.js';
import { LOCKS_TOPIC } from '../lease-locks.js';
import {
  semaphoreWakeKey,
  type SemaphoreAcquireParams,
  type SemaphoreAcquireResult,
  type SemaphoreOperations,
  type SemaphoreReleaseParams,
  type SemaphoreRenewParams,
} from '../semaphores.js';

type PermitRecord = Omit<SemaphorePermit, 'state'>;

interface SemaphoreRecord {
  /** The newest token handed out on this name. */
  token: number;
  readonly slots: Map<number, PermitRecord>;
}

export class MemorySemaphores implements SemaphoreOperations {
  private readonly semaphores = new Map<string, SemaphoreRecord>();

  constructor(
    private readonly now: () => Date,
    /** Announces a release on topic `locks`, as the releasing SQL does inline. */
    private readonly publish: (topic: string, payload: string) => void,
  ) {}

  async semaphoreAcquire(p: SemaphoreAcquireParams): Promise<SemaphoreAcquireResult> {
    const now = this.now();
    let semaphore = this.semaphores.get(p.name);
    if (!semaphore) this.semaphores.set(p.name, (semaphore = { token: 0, slots: new Map() }));
    let firstExpiry = Infinity;
    for (let slot = 0; slot < p.permits; slot++) {
      const taken = semaphore.slots.get(slot);
      if (taken && isValid(taken, now)) {
        firstExpiry = Math.min(firstExpiry, taken.expiresAt.getTime());
        continue;
      }
      semaphore.token += 1;
      const record: PermitRecord = {
        name: p.name,
        slot,
        holder: p.holder,
        token: semaphore.token,
        acquiredAt: now,
        renewedAt: null,
        releasedAt: null,
        expiresAt: new Date(now.getTime() + p.ttlMs),
        renewCount: 0,
        ttlMs: p.ttlMs,
      };
      semaphore.slots.set(slot, record);
      return { acquired: true, permit: view(record, now) };
    }
    return { acquired: false, retryAfterMs: Math.max(0, firstExpiry - now.getTime()) };
  }

  async semaphoreRenew(p: SemaphoreRenewParams): Promise<SemaphorePermit | null> {
    const now = this.now();
    const record = this.owned(p, now);
    if (!record) return null;
    return this.store(
      {
        ...record,
        renewedAt: now,
        renewCount: record.renewCount + 1,
        ttlMs: p.ttlMs,
        expiresAt: new Date(now.getTime() + p.ttlMs),
      },
      now,
    );
  }

  async semaphoreRelease(p: SemaphoreReleaseParams): Promise<SemaphorePermit | null> {
    const now = this.now();
    const record = this.owned(p, now);
    if (!record) return null;
    const permit = this.store({ ...record, releasedAt: now, expiresAt: now }, now);
    this.publish(LOCKS_TOPIC, semaphoreWakeKey(p.name));
    return permit;
  }

  async semaphoreList(p: { name: string }): Promise<SemaphorePermit[]> {
    const now = this.now();
    return [...(this.semaphores.get(p.name)?.slots.values() ?? [])]
      .filter((r) => isValid(r, now))
      .sort((a, b) => a.slot - b.slot)
      .map((r) => view(r, now));
  }

  private owned(p: SemaphoreReleaseParams, now: Date): PermitRecord | undefined {
    const r = this.semaphores.get(p.name)?.slots.get(p.slot);
    return r && isValid(r, now) && r.holder === p.holder && r.token === p.token ? r : undefined;
  }

  private store(record: PermitRecord, now: Date): SemaphorePermit {
    this.semaphores.get(record.name)?.slots.set(record.slot, record);
    return view(record, now);
  }
}

/** Valid: neither released nor expired (a release sets expiresAt to its instant). */
function isValid(r: PermitRecord, now: Date): boolean {
  return r.expiresAt.getTime() > now.getTime();
}

function view(r: PermitRecord, now: Date): SemaphorePermit {
  const state = r.releasedAt ? 'released' : isValid(r, now) ? 'active' : 'expired';
  return { ...r, state };
}
