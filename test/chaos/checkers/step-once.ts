/**
 * Checker 15 (workflows, issue 28): a step's database effects happen once, and only by the
 * generation that holds the job. The workflow role's steps each write one row through the
 * step's transaction, holding the writer's generation and the generation the job had when the
 * row was written (read in the same statement). A step whose writer was already superseded
 * must roll back, so every committed row has the two equal; and the step's record makes it run
 * once, so there is one row per job and step. The flow parents' rows also count their children
 * not completed when the parent's step ran: the parent must run after every child.
 * Finally every workflow job ends completed (or dead-lettered, with its rows then a prefix).
 */
import type { History, Violation } from '../history.js';

export function checkStepOnce(history: History): Violation[] {
  const steps = history.facts.steps ?? [];
  const violations: Violation[] = [];
  const seen = new Map<string, number>();
  for (const row of steps) {
    const key = `${row.jobId}|${row.step}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (row.seenGeneration !== row.generation)
      violations.push({
        kind: 'step-once',
        message: `job ${row.jobId}: step ${row.step} applied by generation ${row.generation} while the job was at generation ${row.seenGeneration} (a stale holder)`,
        evidence: row,
      });
    if (row.unfinishedChildren !== null && row.unfinishedChildren > 0)
      violations.push({
        kind: 'step-once',
        message: `job ${row.jobId}: the flow parent ran with ${row.unfinishedChildren} child(ren) not completed`,
        evidence: row,
      });
  }
  for (const [key, count] of seen)
    if (count > 1) {
      const [jobId, step] = key.split('|');
      violations.push({
        kind: 'step-once',
        message: `job ${jobId}: step ${step} applied ${count} times`,
        evidence: steps.filter((r) => `${r.jobId}|${r.step}` === key),
      });
    }
  for (const job of history.facts.workflowJobs ?? [])
    if (job.status !== 'completed' && job.status !== 'dead')
      violations.push({
        kind: 'job-outcome',
        message: `workflow job ${job.id}: ${job.status} at the end of the run`,
        evidence: job,
      });
  return violations;
}
