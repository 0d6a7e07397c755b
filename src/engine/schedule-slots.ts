/**
 * The schedule-slot family of the engine seam: what schedules are built on.
 *
 * Slots are claimed once per (schedule, slot) and never again; a slot can be claimed only once
 * it has started on the engine's clock. The claimant records the slot it expects after this one
 * (`nextSlot`): only instances know a schedule's series, and the dashboard wants it without one
 * (decision 0301).
 */
import type { FencingToken } from '../core/types.js';

export interface ScheduleSlot {
  readonly name: string;
  /** The start of the slot: its identity. */
  readonly slot: Date;
  readonly holder: string;
  /** The token of the lock or leadership under which it ran, if any. */
  readonly token: FencingToken | null;
  readonly claimedAt: Date;
  /** The slot after this one, as the claimant's schedule computed it; null if none or unknown. */
  readonly nextSlot: Date | null;
}

export interface ScheduleSlotClaimParams {
  name: string;
  slot: Date;
  holder: string;
  token?: FencingToken | null;
  /** The schedule's slot after this one, recorded with the claim. Default null. */
  nextSlot?: Date | null;
}

/** A schedule as its newest claimed slot describes it. */
export interface ScheduleSummary {
  readonly name: string;
  /** The newest claimed slot. */
  readonly lastSlot: Date;
  /** Who claimed (ran) it, and under which token. */
  readonly holder: string;
  readonly token: FencingToken | null;
  readonly claimedAt: Date;
  /** The slot after it, as its claimant computed it: a forecast, in the past if nobody runs it. */
  readonly nextSlot: Date | null;
  /** Claimed slots still kept (old ones are pruned: see scheduleSlotPrune). */
  readonly runs: number;
}

export interface ScheduleSlotOperations {
  /** Claims a started slot of a schedule; null when it was claimed before or has not started. */
  scheduleSlotClaim(params: ScheduleSlotClaimParams): Promise<ScheduleSlot | null>;
  /** The newest claimed slots of a schedule, newest first. */
  scheduleSlotList(params: { name: string; limit: number }): Promise<ScheduleSlot[]>;
  /** Forgets slots that started before `before`; returns how many. */
  scheduleSlotPrune(params: { name: string; before: Date }): Promise<number>;
  /** One summary per schedule with a claimed slot kept, from its newest one, in name order. */
  scheduleList(params: { limit: number }): Promise<ScheduleSummary[]>;
}
