/**
 * The semaphore family on PostgreSQL: one pooled statement each from semaphore-queries. An
 * acquire that is refused reads why (SemaphoreWait): the slots of its permits do not all exist
 * yet (they are created, SemaphoreEnsure, and the acquire runs again), or they are all taken.
 */
import type { LeaseState, SemaphorePermit } from '../../core/types.js';
import {
  semaphoreWakeKey,
  type SemaphoreAcquireParams,
  type SemaphoreAcquireResult,
  type SemaphoreOperations,
  type SemaphoreReleaseParams,
  type SemaphoreRenewParams,
} from '../semaphores.js';
import type { PgContext } from './context.js';
import { withEpoch } from './epoch.js';
import { toSafeInteger } from './rows.js';
import { semaphoreQueries, type SemaphoreQueries } from './semaphore-queries.js';

/** A semaphore_slots row as pg returns it (bigint columns arrive as strings). */
interface PermitRow {
  name: string;
  slot: number;
  holder: string;
  token: string;
  ttl_ms: number;
  renew_count: number;
  acquired_at: Date;
  renewed_at: Date | null;
  released_at: Date | null;
  expires_at: Date;
  state: LeaseState;
}

export class PostgresSemaphores implements SemaphoreOperations {
  private readonly sql: SemaphoreQueries;

  constructor(private readonly ctx: PgContext) {
    this.sql = semaphoreQueries(ctx.quotedSchema);
  }

  async semaphoreAcquire(p: SemaphoreAcquireParams): Promise<SemaphoreAcquireResult> {
    // Twice at most. The second try follows the creation of the missing slots, or a look that
    // found a slot free although the first try took none: that try ran before another caller
    // created the name's slots, or before a holder's release committed. Without it a caller
    // would be refused with "retry now" while a permit waits for it.
    for (let tries = 1; ; tries++) {
      const rows = await withEpoch(this.ctx, 'SemaphoreAcquire', () =>
        this.ctx.query<PermitRow>('SemaphoreAcquire', this.sql.SemaphoreAcquire, [
          p.name,
          p.holder,
          p.permits,
          p.ttlMs,
          this.ctx.pinnedNow(),
        ]),
      );
      if (rows[0]) return { acquired: true, permit: mapPermit(rows[0]) };
      const [wait] = await this.ctx.query<{ slots: number; retry_after_ms: number }>(
        'SemaphoreWait',
        this.sql.SemaphoreWait,
        [p.name, p.permits, this.ctx.pinnedNow()],
      );
      const retryAfterMs = wait?.retry_after_ms ?? 0;
      const slotsExist = (wait?.slots ?? 0) >= p.permits;
      if (tries >= 2 || (slotsExist && retryAfterMs > 0)) return { acquired: false, retryAfterMs };
      if (!slotsExist)
        await this.ctx.query('SemaphoreEnsure', this.sql.SemaphoreEnsure, [
          p.name,
          p.permits,
          this.ctx.pinnedNow(),
        ]);
    }
  }

  async semaphoreRenew(p: SemaphoreRenewParams): Promise<SemaphorePermit | null> {
    const rows = await this.ctx.query<PermitRow>('SemaphoreRenew', this.sql.SemaphoreRenew, [
      p.name,
      p.slot,
      p.holder,
      p.token,
      p.ttlMs,
      this.ctx.pinnedNow(),
    ]);
    return rows[0] ? mapPermit(rows[0]) : null;
  }

  async semaphoreRelease(p: SemaphoreReleaseParams): Promise<SemaphorePermit | null> {
    const rows = await this.ctx.query<PermitRow>('SemaphoreRelease', this.sql.SemaphoreRelease, [
      p.name,
      p.slot,
      p.holder,
      p.token,
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
      semaphoreWakeKey(p.name),
    ]);
    return rows[0] ? mapPermit(rows[0]) : null;
  }

  async semaphoreList(p: { name: string }): Promise<SemaphorePermit[]> {
    const rows = await this.ctx.query<PermitRow>('SemaphoreList', this.sql.SemaphoreList, [
      p.name,
      this.ctx.pinnedNow(),
    ]);
    return rows.map(mapPermit);
  }
}

function mapPermit(row: PermitRow): SemaphorePermit {
  return {
    name: row.name,
    slot: row.slot,
    holder: row.holder,
    token: toSafeInteger(row.token, 'semaphore_slots.token'),
    acquiredAt: row.acquired_at,
    renewedAt: row.renewed_at,
    releasedAt: row.released_at,
    expiresAt: row.expires_at,
    renewCount: row.renew_count,
    ttlMs: row.ttl_ms,
    state: row.state,
  };
}
