/**
 * The lock family on PostgreSQL. Connection-bound locks (advisory, session) are delegated to
 * PostgresConnectionLocks; lease locks, schedule slots and fences are one pooled statement
 * each from lock-queries (a fence check runs on the caller's transaction when given one).
 */
import { StaleTokenError } from '../../core/errors.js';
import type { FencingToken, Lease } from '../../core/types.js';
import type {
  ConnectionLock,
  ConnectionLockParams,
  ConnectionLockWaitParams,
  FenceCheckParams,
  LeaseLockAcquireParams,
  LeaseLockAcquireResult,
  LeaseLockReleaseParams,
  LeaseLockRenewParams,
  LockOperations,
  ScheduleSlot,
  ScheduleSlotClaimParams,
  ScheduleSummary,
  SessionLock,
} from '../locks.js';
import type { PgContext } from './context.js';
import { lockQueries, type LockQueries } from './lock-queries.js';
import { PostgresConnectionLocks } from './postgres-connection-locks.js';
import { mapLease, toSafeInteger, type LeaseRow } from './rows.js';
import { withEpoch } from './epoch.js';

interface SlotRow {
  name: string;
  slot: Date;
  holder: string;
  token: string | null;
  claimed_at: Date;
  next_slot: Date | null;
}

const mapSlot = (row: SlotRow): ScheduleSlot => ({
  name: row.name,
  slot: row.slot,
  holder: row.holder,
  token: row.token === null ? null : toSafeInteger(row.token, 'schedule_slots.token'),
  claimedAt: row.claimed_at,
  nextSlot: row.next_slot,
});

const mapSummary = (row: SlotRow & { runs: number }): ScheduleSummary => {
  const { slot, ...newest } = mapSlot(row);
  return { ...newest, lastSlot: slot, runs: row.runs };
};

export class PostgresLocks implements LockOperations {
  private readonly sql: LockQueries;
  private readonly connectionLocks: PostgresConnectionLocks;

  constructor(private readonly ctx: PgContext) {
    this.sql = lockQueries(ctx.quotedSchema);
    this.connectionLocks = new PostgresConnectionLocks(ctx, this.sql);
  }

  advisoryTryLock(p: ConnectionLockParams): Promise<ConnectionLock | null> {
    return this.connectionLocks.advisoryTryLock(p);
  }

  advisoryLock(p: ConnectionLockWaitParams): Promise<ConnectionLock> {
    return this.connectionLocks.advisoryLock(p);
  }

  sessionLockTryAcquire(p: ConnectionLockParams): Promise<SessionLock | null> {
    return this.connectionLocks.sessionLockTryAcquire(p);
  }

  sessionLockAcquire(p: ConnectionLockWaitParams): Promise<SessionLock> {
    return this.connectionLocks.sessionLockAcquire(p);
  }

  async leaseLockAcquire(p: LeaseLockAcquireParams): Promise<LeaseLockAcquireResult> {
    const rows = await withEpoch(this.ctx, 'LeaseLockAcquire', () =>
      this.ctx.query<LeaseRow>('LeaseLockAcquire', this.sql.LeaseLockAcquire, [
        p.name,
        p.holder,
        p.ttlMs,
        p.quietMs ?? 0,
        p.delayMs ?? 0,
        this.ctx.pinnedNow(),
      ]),
    );
    if (rows[0]) return { acquired: true, lease: mapLease(rows[0]) };
    const [current] = await this.ctx.query<LeaseRow & { retry_after_ms: number }>(
      'LeaseLockGet',
      this.sql.LeaseLockGet,
      [p.name, this.ctx.pinnedNow()],
    );
    return {
      acquired: false,
      current: current ? mapLease(current) : null,
      retryAfterMs: current?.retry_after_ms ?? 0,
    };
  }

  async leaseLockRenew(p: LeaseLockRenewParams): Promise<Lease | null> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockRenew', this.sql.LeaseLockRenew, [
      p.name,
      p.holder,
      p.token,
      p.ttlMs,
      this.ctx.pinnedNow(),
    ]);
    return rows[0] ? mapLease(rows[0]) : null;
  }

  async leaseLockRelease(p: LeaseLockReleaseParams): Promise<Lease | null> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockRelease', this.sql.LeaseLockRelease, [
      p.name,
      p.holder,
      p.token,
      p.atLeastMs ?? 0,
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
    ]);
    return rows[0] ? mapLease(rows[0]) : null;
  }

  async leaseLockGet(p: { name: string }): Promise<Lease | null> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockGet', this.sql.LeaseLockGet, [
      p.name,
      this.ctx.pinnedNow(),
    ]);
    return rows[0] ? mapLease(rows[0]) : null;
  }

  async leaseLockList(p: { prefix?: string; limit: number }): Promise<Lease[]> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockList', this.sql.LeaseLockList, [
      p.prefix ?? null,
      p.limit,
      this.ctx.pinnedNow(),
    ]);
    return rows.map(mapLease);
  }

  async scheduleSlotClaim(p: ScheduleSlotClaimParams): Promise<ScheduleSlot | null> {
    const rows = await withEpoch(this.ctx, 'ScheduleSlotClaim', () =>
      this.ctx.query<SlotRow>('ScheduleSlotClaim', this.sql.ScheduleSlotClaim, [
        p.name,
        p.slot,
        p.holder,
        p.token ?? null,
        this.ctx.pinnedNow(),
        p.nextSlot ?? null,
      ]),
    );
    return rows[0] ? mapSlot(rows[0]) : null;
  }

  async scheduleSlotList(p: { name: string; limit: number }): Promise<ScheduleSlot[]> {
    const rows = await this.ctx.query<SlotRow>('ScheduleSlotList', this.sql.ScheduleSlotList, [
      p.name,
      p.limit,
    ]);
    return rows.map(mapSlot);
  }

  async scheduleSlotPrune(p: { name: string; before: Date }): Promise<number> {
    const rows = await this.ctx.query<{ pruned: number }>(
      'ScheduleSlotPrune',
      this.sql.ScheduleSlotPrune,
      [p.name, p.before],
    );
    return rows[0]?.pruned ?? 0;
  }

  async scheduleList(p: { limit: number }): Promise<ScheduleSummary[]> {
    const rows = await this.ctx.query<SlotRow & { runs: number }>(
      'ScheduleList',
      this.sql.ScheduleList,
      [p.limit],
    );
    return rows.map(mapSummary);
  }

  async fenceCheck(p: FenceCheckParams): Promise<void> {
    const rows = await this.ctx.query<{ token: string }>(
      'FenceCheck',
      this.sql.FenceCheck,
      [p.scope, p.token, this.ctx.pinnedNow()],
      p.tx,
    );
    if (rows[0]) return;
    const [newest] = await this.ctx.query<{ token: string }>(
      'FenceGet',
      this.sql.FenceGet,
      [p.scope],
      p.tx,
    );
    throw new StaleTokenError(p.scope, p.token, toSafeInteger(newest?.token ?? 0, 'fences.token'));
  }

  async fenceGet(p: { scope: string }): Promise<FencingToken | null> {
    const rows = await this.ctx.query<{ token: string }>('FenceGet', this.sql.FenceGet, [p.scope]);
    return rows[0] ? toSafeInteger(rows[0].token, 'fences.token') : null;
  }

  /** Frees every connection-bound lock; their holders' signals fire. */
  close(): void {
    this.connectionLocks.close();
  }
}
