/**
 * Checker: no logical enqueue creates two jobs. Every call of the producer role carries its own
 * id in the payload; a shared statement whose answer was lost after it committed, retried call
 * by call, would create its jobs a second time (decision 0220).
 */
import type { History, Violation } from '../history.js';

export function checkEnqueueDuplicates(history: History): Violation[] {
  const byOp = new Map<string, number[]>();
  for (const job of history.facts.enqueued ?? []) {
    const ids = byOp.get(job.opId) ?? [];
    ids.push(job.id);
    byOp.set(job.opId, ids);
  }
  const violations: Violation[] = [];
  for (const [opId, ids] of byOp) {
    if (ids.length < 2) continue;
    const answers = history.events.filter(
      (e) => e.type === 'enqueue' && e.opId === opId && e.phase !== 'invoke',
    );
    violations.push({
      kind: 'enqueue-duplicate',
      message: `enqueue ${opId} created ${ids.length} jobs (${ids.join(', ')})`,
      evidence: { opId, ids, answers },
    });
  }
  return violations;
}
