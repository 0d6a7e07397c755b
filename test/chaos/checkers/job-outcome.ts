/**
 * Checker 6: every job ends completed exactly once or dead-lettered. Each completion writes the
 * job's effect in its own transaction, so the effects table holds one row per accepted
 * completion: a completed job has exactly one, a dead one none.
 */
import type { History, Violation } from '../history.js';

export function checkJobOutcome(history: History): Violation[] {
  const violations: Violation[] = [];
  const effects = new Map<number, number>();
  for (const e of history.facts.effects) effects.set(e.jobId, (effects.get(e.jobId) ?? 0) + 1);
  for (const job of history.facts.jobs) {
    const count = effects.get(job.id) ?? 0;
    if (job.status === 'completed' && count === 1) continue;
    if (job.status === 'dead' && count === 0) continue;
    violations.push({
      kind: 'job-outcome',
      message: `job ${job.id}: ${job.status} with ${count} accepted completion(s)`,
      evidence: { job, completions: history.facts.effects.filter((e) => e.jobId === job.id) },
    });
  }
  return violations;
}
