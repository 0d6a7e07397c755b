/**
 * Broken variant, for the chaos harness only: a shared enqueue whose answer is lost after it
 * committed is taken for a refusal, so the coalescer retries each call alone, as every failed
 * list was before decision 0220. The proxy cannot time a cut between a commit and its answer, so
 * the variant loses the answer itself: every third multi-row enqueue commits, then fails as a
 * statement the database refused would (an `internal` error, not `unavailable` with the
 * outcome unknown). Each of its jobs is then created twice.
 */
import { LeaseholdError } from '../../../src/core/errors.js';
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../../src/engine/postgres/postgres-engine.js';

export class LostEnqueueAnswerRetriedEngine extends PostgresEngine {
  constructor(options: PostgresEngineOptions) {
    super(options);
    const real = this.jobEnqueue;
    let shared = 0;
    this.jobEnqueue = async (p) => {
      const answer = await real(p);
      if (p.jobs.length > 1 && !p.tx && ++shared % 3 === 0)
        throw new LeaseholdError(
          'internal',
          'JobEnqueue: answer lost (deliberately reported as a refusal)',
        );
      return answer;
    };
  }
}
