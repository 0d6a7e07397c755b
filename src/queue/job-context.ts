/**
 * What a handler receives besides its job (JobContext), one small object per job. A class with
 * its methods on the prototype, and the signal read only when asked for, so a job whose
 * handler uses none of it costs one allocation here, not three closures and a controller.
 */
import type { Duration } from '../core/duration.js';
import { LeaseLostError } from '../core/errors.js';
import { removableOnComplete, type JobChild } from '../core/flows.js';
import type { JobProgress } from '../core/types.js';
import { requireJobProgress } from '../core/validate.js';
import type { CallerTransaction, Engine } from '../engine/engine.js';
import type { JobRun } from './job-run.js';
import { RunSteps, type StepFunction, type StepHost } from './job-steps.js';
import type { JobContext } from './worker-options.js';

/** The worker's side of every context: how to renew soon and how to complete in a transaction. */
export interface ContextHost extends StepHost {
  readonly engine: Engine;
  readonly workerId: string;
  readonly removeOnComplete: boolean;
  renewSoon(): Promise<void>;
  /** Queues the run's latest progress for the next throttled write. */
  reportProgress(run: JobRun, progress: JobProgress): void;
}

export class RunContext implements JobContext {
  readonly token: number;
  readonly attempt: number;
  /** Made at the first step or sleep: most handlers use neither. */
  private steps: RunSteps | undefined;

  constructor(
    private readonly run: JobRun,
    private readonly host: ContextHost,
  ) {
    this.token = run.ref.generation;
    this.attempt = run.job.attempts;
  }

  get signal(): AbortSignal {
    return this.run.signal;
  }

  async renew(): Promise<void> {
    this.throwIfLost();
    await this.host.renewSoon();
    this.throwIfLost();
  }

  /** @deprecated the former name of `renew()` (decision 0235). */
  heartbeat(): Promise<void> {
    return this.renew();
  }

  progress(value: JobProgress): void {
    const progress = requireJobProgress('progress', value);
    this.throwIfLost();
    this.host.reportProgress(this.run, progress);
  }

  async complete(tx: CallerTransaction, result?: unknown): Promise<void> {
    this.throwIfLost();
    const { run, host } = this;
    const accepted = await host.engine.jobComplete({
      workerId: host.workerId,
      jobs: [{ ...run.ref, result: result ?? null }],
      tx,
      remove: host.removeOnComplete && removableOnComplete(run.job),
    });
    if (!accepted.includes(run.ref.id))
      throw new LeaseLostError(`job:${run.ref.id}`, 'the job is no longer this worker’s');
    // Timed out while the statement was out: the attempt is being failed (that failure waits
    // for this transaction's row lock), so the caller must roll back, as for a lost lease. A
    // lease lost meanwhile is not checked again: the database accepted, so the job was ours.
    if (run.timedOut) this.throwIfLost();
    run.completedInTransaction = true;
  }

  step<T>(name: string, fn: StepFunction<T>): Promise<T> {
    this.steps ??= new RunSteps(this.run, this.host);
    return this.steps.step(name, fn);
  }

  sleep(name: string, duration: Duration): Promise<void> {
    this.steps ??= new RunSteps(this.run, this.host);
    return this.steps.sleep(name, duration);
  }

  async childResults(): Promise<JobChild[]> {
    return (await this.host.engine.jobChildren({ id: this.run.ref.id })).children;
  }

  /** Lost, handed back or timed out: the job is no longer this handler's to renew or complete. */
  private throwIfLost(): void {
    const reason = this.run.stopReason;
    if (reason) throw reason;
  }
}
