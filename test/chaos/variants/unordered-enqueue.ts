/**
 * Broken variant, for the chaos harness only: the single-enqueue coalescer as it was before
 * decision 0220, without order keys. A statement stalled past 25 ms (the producer role's jobs
 * with `stallMs` sleep in their INSERT) then stops holding back the calls made after it, and a
 * later call of the same partition can commit, and draw its id, first. The engine is the real
 * one; the producer role builds its queue on this coalescer when the run's variant is this one.
 */
import type { Engine } from '../../../src/engine/engine.js';
import type { EnqueueOutcome, JobSpec } from '../../../src/engine/jobs.js';
import { Coalescer } from '../../../src/runtime/coalescer.js';

export function unorderedSingles(engine: Engine): Coalescer<JobSpec, EnqueueOutcome> {
  return new Coalescer<JobSpec, EnqueueOutcome>({
    one: async (spec) => (await engine.jobEnqueue({ jobs: [spec] }))[0]!,
    many: (specs) => engine.jobEnqueue({ jobs: [...specs] }),
    maxBatch: 1_000,
  });
}
