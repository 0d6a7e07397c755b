/**
 * Which faults were in force when: the checkers judge timing bounds only where the harness did
 * not itself make them impossible (a frozen process cannot fire a timer; a follower that is
 * down cannot take over).
 */
import type { FaultRecord, FaultType } from '../history.js';

/** Faults that stop a process's event loop: no timer of that process can fire meanwhile. */
const FREEZES: ReadonlySet<FaultType> = new Set(['sigstop', 'stall']);

/**
 * When a deadline falling at `at` (wall) can first be acted on by `proc`: `at` itself, or the end
 * of the freeze of `proc` that covered it (following freezes that chain into one another).
 */
export function thawedAt(faults: readonly FaultRecord[], proc: string, at: number): number {
  let when = at;
  for (let changed = true; changed;) {
    changed = false;
    for (const f of faults) {
      if (f.skipped || f.target !== proc || !FREEZES.has(f.type)) continue;
      if (f.startedAt <= when && when < f.endedAt) {
        when = f.endedAt;
        changed = true;
      }
    }
  }
  return when;
}

/** The faults whose window meets [from, to] (wall), skipped ones excluded. */
export function faultsDuring(
  faults: readonly FaultRecord[],
  from: number,
  to: number,
): FaultRecord[] {
  return faults.filter((f) => !f.skipped && f.startedAt <= to && f.endedAt >= from);
}
