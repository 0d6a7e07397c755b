/**
 * Checker 9: nothing outlives the run. Once every child was stopped, no server session opened
 * through the harness's proxy may remain, no advisory lock may be held in the chaos database,
 * and no child process may still be alive.
 */
import type { History, Violation } from '../history.js';

export function checkLeaks(history: History): Violation[] {
  const { leakedConnections, leakedAdvisoryLocks, leakedProcesses } = history.facts;
  const violations: Violation[] = [];
  for (const c of leakedConnections)
    violations.push({
      kind: 'leak',
      message: `connection of backend ${c.pid} (${c.application}, ${c.state}) left open`,
      evidence: c,
    });
  if (leakedAdvisoryLocks > 0)
    violations.push({
      kind: 'leak',
      message: `${leakedAdvisoryLocks} advisory lock(s) still held`,
    });
  for (const p of leakedProcesses)
    violations.push({
      kind: 'leak',
      message: `process ${p.proc} (pid ${p.pid}) still running`,
      evidence: p,
    });
  return violations;
}
