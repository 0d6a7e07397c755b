/**
 * Checker 8: a schedule slot runs at most once. The task writes a row per run (no unique key,
 * on purpose, so a second run shows), and each child reports the slots it ran.
 */
import type { ChildEvent, History, SlotEvent, Violation } from '../history.js';

export function checkSlotOnce(history: History): Violation[] {
  const violations: Violation[] = [];
  const runs = new Map<string, string[]>();
  for (const run of history.facts.scheduleRuns) {
    const key = `${run.name}@${new Date(run.slot).toISOString()}`;
    runs.set(key, [...(runs.get(key) ?? []), run.proc]);
  }
  for (const [slot, procs] of runs) {
    if (procs.length > 1)
      violations.push({
        kind: 'slot-twice',
        message: `${slot} ran ${procs.length} times (${procs.join(', ')})`,
      });
  }
  const reported = new Map<string, (ChildEvent & SlotEvent)[]>();
  for (const e of history.events.filter((e): e is ChildEvent & SlotEvent => e.type === 'slot')) {
    const key = `${e.name}@${new Date(e.slot).toISOString()}`;
    reported.set(key, [...(reported.get(key) ?? []), e]);
  }
  for (const [slot, events] of reported) {
    if (events.length > 1 && (runs.get(slot)?.length ?? 0) <= 1)
      violations.push({
        kind: 'slot-twice',
        message: `${slot} was reported run by ${events.map((e) => `${e.proc}#${e.incarnation}`).join(', ')}`,
        // The database lost the first run's row (and its claim of the slot): an acknowledged
        // run that vanished, which made the second possible.
        ackedAt: events[0]!.t,
      });
  }
  return violations;
}
