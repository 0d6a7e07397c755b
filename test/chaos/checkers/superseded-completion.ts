/**
 * Checker 7: no completion accepted from a superseded generation. A job's generation grows with
 * every claim and nothing re-claims a completed job, so an accepted completion (an effect row, or
 * a worker told `complete-ok`) must carry the job's final generation.
 */
import type { ChildEvent, History, JobEvent, Violation } from '../history.js';

export function checkSupersededCompletion(history: History): Violation[] {
  const violations: Violation[] = [];
  const finalGeneration = new Map(history.facts.jobs.map((j) => [j.id, j.generation]));
  for (const effect of history.facts.effects) {
    const generation = finalGeneration.get(effect.jobId);
    if (generation !== undefined && effect.generation !== generation) {
      violations.push({
        kind: 'superseded-completion',
        message: `job ${effect.jobId}: completion by ${effect.worker} of generation ${effect.generation} accepted, the job is at generation ${generation}`,
        evidence: effect,
      });
    }
  }
  const effects = new Set(history.facts.effects.map((e) => `${e.jobId}|${e.generation}`));
  const accepted = history.events.filter(
    (e): e is ChildEvent & JobEvent => e.type === 'job' && e.phase === 'complete-ok',
  );
  for (const e of accepted) {
    const generation = finalGeneration.get(e.jobId);
    if (generation !== undefined && e.generation !== generation) {
      violations.push({
        kind: 'superseded-completion',
        message: `job ${e.jobId}: ${e.proc} was told its completion of generation ${e.generation} was accepted; the job is at generation ${generation}`,
        evidence: e,
        // Its effect gone too: the completion itself was lost (acknowledged-lost says so), and
        // the job ran again under a newer generation.
        ...(effects.has(`${e.jobId}|${e.generation}`) ? {} : { ackedAt: e.t }),
      });
    }
  }
  return violations;
}
