/**
 * What a worker does once a handler is done (or timed out): writes the attempt's outcome through
 * the outcome batcher, in its turn among the job's attempts (attempt-order.ts), and says what
 * became of it (`job:completed`, `job:failed`, or the loss), then lets the run go.
 *
 * The common outcome, a completion of a job still ours, is written in callbacks rather than
 * async steps, since every job takes this path and each promise a job makes costs again under a
 * promise hook (AsyncLocalStorage on Node 20; decision 0271).
 */
import type { BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import type { TypedEvents } from '../runtime/events.js';
import type { AttemptOrder } from './attempt-order.js';
import type { JobRun } from './job-run.js';
import type { OutcomeBatcher } from './outcome-batcher.js';
import type { ProgressWriter } from './progress-writer.js';
import { decideFailure } from './retry-policy.js';
import type { WorkerEvents } from './worker-events.js';

export interface OutcomeReporterHost {
  readonly events: TypedEvents<WorkerEvents>;
  readonly attempts: AttemptOrder;
  readonly progress: ProgressWriter;
  readonly batcher: OutcomeBatcher;
  /** The worker's runs in flight: a run leaves it once its outcome is told. */
  readonly runs: Set<JobRun>;
  readonly clock: Clock;
  readonly retryBackoff: BackoffPolicy;
  readonly random: () => number;
  reportLost(run: JobRun): void;
}

export class OutcomeReporter {
  constructor(private readonly host: OutcomeReporterHost) {}

  /**
   * Writes the outcome of a run whose handler is done (or timed out) and says what became of it;
   * `written` is called once it is told. Progress not yet written is dropped for a completion
   * (which says more) and written before a failure (which then shows how far the attempt got).
   */
  settle(run: JobRun, ok: boolean, value: unknown, written: () => void = () => {}): void {
    if (ok && !run.lost && !run.completedInTransaction) this.complete(run, value, written);
    else void this.settleOther(run, ok, value).finally(written);
  }

  /** A completion of a job still ours, every job's path: callbacks, no promise of its own. */
  private complete(run: JobRun, result: unknown, written: () => void): void {
    const { attempts, batcher, events } = this.host;
    const id = run.ref.id;
    attempts.begin(id);
    this.host.progress.forget(id);
    batcher.complete(run, result ?? null, (accepted) => {
      try {
        if (accepted) events.emit('job:completed', { job: run.job, durationMs: this.elapsed(run) });
        else this.host.reportLost(run);
      } catch (error) {
        // The batcher tells its whole batch in one loop: nothing may break out of it.
        events.emit('worker:error', { where: 'complete', error });
      } finally {
        this.release(run);
        attempts.end(id);
        written();
      }
    });
  }

  /** A failure, a completion in the caller's transaction, or a run already lost. */
  private async settleOther(run: JobRun, ok: boolean, value: unknown): Promise<void> {
    const { attempts, progress } = this.host;
    attempts.begin(run.ref.id);
    try {
      if (ok || run.lost) progress.forget(run.ref.id);
      else await progress.flushJob(run.ref.id);
      await this.tellOther(run, ok, value);
    } finally {
      attempts.end(run.ref.id);
    }
  }

  private async tellOther(run: JobRun, ok: boolean, value: unknown): Promise<void> {
    const { events, batcher } = this.host;
    const { job } = run;
    try {
      if (run.lost) {
        // The job is someone else's now (or will be): an outcome would be refused anyway.
      } else if (ok) {
        // Completed in its transaction: stored with it.
        events.emit('job:completed', { job, durationMs: this.elapsed(run) });
      } else {
        // Also when the handler completed in its transaction and then threw: if that transaction
        // rolled back the job is still ours and fails; if it committed, the failure is refused.
        const { retryBackoff, random } = this.host;
        const decision = decideFailure(value, job.attempts, retryBackoff, random);
        const outcome = await batcher.fail(run, decision);
        events.emit('job:failed', {
          job,
          error: decision.error,
          outcome,
          timedOut: run.timedOut,
          durationMs: this.elapsed(run),
        });
      }
    } finally {
      this.release(run);
    }
  }

  private release(run: JobRun): void {
    run.finish();
    this.host.runs.delete(run);
  }

  private elapsed(run: JobRun): number {
    return Math.round(this.host.clock.monotonic() - run.startedAt);
  }
}
