/**
 * Checker 5: a new leader within the election's bound. On the database clock, the next term must
 * begin within renewEvery + pollEvery (+ slack for a loaded machine) of the previous term's end:
 * followers try again the moment the leader's term expires, or a poll later at most; renewEvery
 * because the dead leader's last renewal may have committed without its answer being recorded,
 * so its real expiry can be that much later than the recorded one. A gap during which the harness
 * kept other candidates or the database out of play (any fault except on the old leader alone)
 * is not judged.
 */
import type { History, Violation } from '../history.js';
import { faultsDuring } from './fault-windows.js';
import { leaseTerms } from './terms.js';

export function checkSlowTakeover(history: History): Violation[] {
  const { bounds } = history;
  const resource = `leasehold:election:${bounds.electionName}`;
  const terms = leaseTerms(history.events).filter(
    (t) => t.family === 'lock' && t.resource === resource,
  );
  const renewEvery = bounds.electionTtlMs / 3;
  const bound = renewEvery + bounds.electionPollMs + bounds.takeoverSlackMs;
  const violations: Violation[] = [];
  for (let i = 1; i < terms.length; i++) {
    const before = terms[i - 1]!;
    const after = terms[i]!;
    const gap = after.dbStart - before.dbEnd;
    if (gap <= bound) continue;
    // Fault windows are on the wall clock; the terms on the database clock.
    const from = before.dbEnd - bounds.dbClockOffsetMs - renewEvery;
    const to = after.dbStart - bounds.dbClockOffsetMs;
    const excusing = faultsDuring(history.faults, from, to).filter((f) => f.target !== before.proc);
    if (excusing.length > 0) continue;
    violations.push({
      kind: 'slow-takeover',
      message: `${bounds.electionName}: ${after.holder} took over ${Math.round(gap)} ms after ${before.holder}'s term ended (bound ${Math.round(bound)} ms)`,
      evidence: { before, after },
    });
  }
  return violations;
}
