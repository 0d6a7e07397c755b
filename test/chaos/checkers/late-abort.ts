/**
 * Checker 4: a holder's abort signal fires by its trust deadline. The deadline (wall) is the one
 * the holder computed after its last confirmed acquire or renewal; the signal may fire up to the
 * margin later (timer latency on a loaded machine), because the margin is exactly the slack
 * between the deadline and the database's expiry. Later than that, the holder still trusted a
 * term the database could already give away. A process frozen by the harness (SIGSTOP, a stalled
 * event loop) is judged from the moment it was thawed.
 */
import type { ChildEvent, History, SignalEvent, TrustEvent, Violation } from '../history.js';
import { thawedAt } from './fault-windows.js';

export function checkLateAbort(history: History): Violation[] {
  const violations: Violation[] = [];
  const trust = new Map<string, ChildEvent & TrustEvent>();
  const key = (e: {
    proc: string;
    incarnation: number;
    resource: string;
    holder: string;
    token: number;
  }): string => `${e.proc}#${e.incarnation}|${e.resource}|${e.holder}|${e.token}`;
  for (const e of [...history.events].sort((a, b) => a.t - b.t)) {
    if (e.type === 'trust') trust.set(key(e), e);
    if (e.type !== 'signal' || e.reason !== 'lease_lost') continue;
    const signal = e as ChildEvent & SignalEvent;
    const deadline = trust.get(key(signal));
    if (!deadline) continue;
    const due = thawedAt(history.faults, signal.proc, deadline.trustedUntil);
    const late = signal.t - due;
    if (late > deadline.marginMs) {
      violations.push({
        kind: 'late-abort',
        message: `${signal.proc} ${signal.resource} (token ${signal.token}): signal fired ${Math.round(late)} ms after its trust deadline (margin ${deadline.marginMs} ms)`,
        evidence: { deadline, signal },
      });
    }
  }
  return violations;
}
