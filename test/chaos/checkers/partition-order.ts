/**
 * Checker: the jobs of one partition key are created in call order. The producer role makes the
 * calls of each of its partitions one after another (`seq`), overlapping and coalesced; the
 * jobs' ids, which are their FIFO order, must follow `seq` (decision 0220). A call that failed
 * leaves a gap, never an inversion.
 *
 * Calls whose outcome is unknown are left out: one answered `unavailable` with the outcome
 * unknown (its connection was cut mid-statement, and the server may still finish it, after
 * later calls), and one never answered (its process was killed). That is the promise's limit.
 */
import type { History, Violation } from '../history.js';

export function checkPartitionOrder(history: History): Violation[] {
  const answered = new Set<string>();
  for (const e of history.events)
    if (
      e.type === 'enqueue' &&
      (e.phase === 'ok' || (e.phase === 'fail' && !e.error?.includes('outcome unknown')))
    )
      answered.add(e.opId);
  const last = new Map<string, { id: number; seq: number }>();
  const violations: Violation[] = [];
  for (const job of history.facts.enqueued ?? []) {
    if (!answered.has(job.opId)) continue;
    const before = last.get(job.part);
    if (before && before.seq >= job.seq)
      violations.push({
        kind: 'partition-order',
        message: `partition ${job.part}: call ${job.seq} got job ${job.id}, after call ${before.seq}'s job ${before.id}`,
        evidence: { before, job },
      });
    if (!before || job.seq > before.seq) last.set(job.part, { id: job.id, seq: job.seq });
  }
  return violations;
}
