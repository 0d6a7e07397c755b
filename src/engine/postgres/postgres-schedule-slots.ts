/**
 * The schedule-slot family on PostgreSQL: one pooled statement each from lock-queries; a claim
 * is an insert that a slot claimed before (or not yet started) leaves out.
 */
import type {
  ScheduleSlot,
  ScheduleSlotClaimParams,
  ScheduleSlotOperations,
  ScheduleSummary,
} from '../schedule-slots.js';
import type { PgContext } from './context.js';
import { withEpoch } from './epoch.js';
import type { LockQueries } from './lock-queries.js';
import { toSafeInteger } from './rows.js';

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

export class PostgresScheduleSlots implements ScheduleSlotOperations {
  constructor(
    private readonly ctx: PgContext,
    private readonly sql: LockQueries,
  ) {}

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
}
