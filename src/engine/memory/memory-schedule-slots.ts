/**
 * The schedule-slot family in process: slots claimed once, and only once started on the
 * engine's clock, as the PostgreSQL engine's insert does.
 */
import type {
  ScheduleSlot,
  ScheduleSlotClaimParams,
  ScheduleSlotOperations,
  ScheduleSummary,
} from '../schedule-slots.js';
import { byCodePoint } from './code-point-order.js';

export class MemoryScheduleSlots implements ScheduleSlotOperations {
  private readonly slots = new Map<string, Map<number, ScheduleSlot>>();

  constructor(private readonly now: () => Date) {}

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
}
