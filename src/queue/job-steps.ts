/**
 * `ctx.step` and `ctx.sleep` for one run of a job (decision 0254): what a handler does once,
 * however many times its job runs.
 *
 * The job's recorded steps are loaded once per run, at its first step or sleep (one read); a
 * recorded step answers its value from them without running. A new step is one engine call
 * (jobStepRun: its transaction, the function, the guarded record, COMMIT), and a sleep one
 * guarded engine call (jobSleep) after which the attempt is over: the worker frees the slot and
 * ignores whatever the handler does next.
 */
import { toMilliseconds, type Duration } from '../core/duration.js';
import { InvalidArgumentError, LeaseLostError } from '../core/errors.js';
import { requireName } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';
import { STEP_NAME_MAX_LENGTH, type StepTransaction } from '../engine/steps.js';
import type { JobRun } from './job-run.js';

/** What a step function receives besides its transaction. */
export interface StepInfo {
  /**
   * `${jobId}:${name}`: the same on every attempt, so a service outside the database that
   * deduplicates by key acts once. A step that wants a fresh effect per attempt appends
   * `attempt` to it.
   */
  readonly key: string;
  readonly jobId: number;
  readonly name: string;
  /** The job's attempt running this step (1 on the first; a sleep gives its attempt back). */
  readonly attempt: number;
  /** The run's signal: fires when the job is no longer this run's. */
  readonly signal: AbortSignal;
}

/** A step function: runs in the step's transaction; its answer (JSON) is recorded. */
export type StepFunction<T> = (tx: StepTransaction, step: StepInfo) => Promise<T> | T;

/** The longest sleep: about ten years (an instant further off is a schedule, not a sleep). */
export const SLEEP_MAX_MS = 10 * 365 * 24 * 60 * 60 * 1000;

/**
 * Thrown by `ctx.sleep` once the sleep is recorded: the attempt is over and the job pending
 * until `until`. The worker recognises it (neither completing nor failing the run); a handler
 * that catches errors should rethrow it.
 */
export class JobSleepSignal extends Error {
  override readonly name = 'JobSleepSignal';

  constructor(
    readonly jobId: number,
    readonly step: string,
    readonly until: Date,
  ) {
    super(`job ${jobId} sleeps ("${step}") until ${until.toISOString()}`);
  }
}

/** The worker's side of a run's steps. */
export interface StepHost {
  readonly engine: Engine;
  readonly workerId: string;
  /** The job is no longer the run's (a step or sleep was refused): its signal fires. */
  lose(run: JobRun, error: LeaseLostError): void;
  /** The sleep is recorded: the attempt is over, its slot free. */
  slept(run: JobRun, signal: JobSleepSignal): void;
}

export class RunSteps {
  /** The recorded values by name, loaded at the first step or sleep of the run. */
  private recorded: Promise<Map<string, unknown>> | undefined;
  /** Steps of this run being run, by name: a second call with the name waits for the first. */
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(
    private readonly run: JobRun,
    private readonly host: StepHost,
  ) {}

  async step<T>(name: string, fn: StepFunction<T>): Promise<T> {
    requireName('name', name, STEP_NAME_MAX_LENGTH);
    if (typeof fn !== 'function') throw new InvalidArgumentError('fn', 'must be a function');
    this.throwIfStopped();
    const recorded = await this.load();
    if (recorded.has(name)) return structuredClone(recorded.get(name)) as T;
    let running = this.running.get(name);
    if (!running) {
      running = this.runStep(name, fn, recorded);
      this.running.set(name, running);
      void running.then(
        () => this.running.delete(name),
        () => this.running.delete(name),
      );
    }
    return structuredClone(await running) as T;
  }

  async sleep(name: string, duration: Duration): Promise<void> {
    requireName('name', name, STEP_NAME_MAX_LENGTH);
    const delayMs = toMilliseconds('duration', duration, { min: 0, max: SLEEP_MAX_MS });
    this.throwIfStopped();
    const recorded = await this.load();
    if (recorded.has(name)) {
      const until = sleepInstant(name, recorded.get(name));
      // Woken at (or after) its instant: the sleep is over. Woken early (an admin retry): it
      // sleeps again for the remainder, to the recorded instant.
      if (until.getTime() <= (await this.host.engine.now()).getTime()) return;
      this.throwIfStopped();
    }
    const { run, host } = this;
    const answer = await host.engine.jobSleep({
      workerId: host.workerId,
      ref: run.ref,
      name,
      delayMs,
    });
    if (!answer) this.lost(`sleep "${name}" was not recorded`);
    const signal = new JobSleepSignal(run.ref.id, name, answer.until);
    recorded.set(name, answer.until.toISOString());
    host.slept(run, signal);
    throw signal;
  }

  private async runStep<T>(
    name: string,
    fn: StepFunction<T>,
    recorded: Map<string, unknown>,
  ): Promise<unknown> {
    const { run, host } = this;
    const info: StepInfo = {
      key: `${run.ref.id}:${name}`,
      jobId: run.ref.id,
      name,
      attempt: run.job.attempts,
      signal: run.signal,
    };
    const outcome = await host.engine.jobStepRun({
      workerId: host.workerId,
      ref: run.ref,
      name,
      body: async (tx) => jsonValue(name, await fn(tx, info)),
    });
    if (!outcome.recorded) this.lost(`step "${name}" was not recorded`);
    recorded.set(name, outcome.value);
    return outcome.value;
  }

  private load(): Promise<Map<string, unknown>> {
    this.recorded ??= this.host.engine
      .jobSteps({ id: this.run.ref.id })
      .then((steps) => new Map(steps.map((s) => [s.name, s.value])));
    // A failed load is tried again by the next step.
    this.recorded.catch(() => (this.recorded = undefined));
    return this.recorded;
  }

  /** Refused by the engine: the job is no longer this run's. Throws the stop reason. */
  private lost(what: string): never {
    const { run } = this;
    const error = new LeaseLostError(
      `job:${run.ref.id}`,
      `${what}: the job is no longer this worker’s (expired, cancelled or taken over)`,
    );
    this.host.lose(run, error);
    throw run.stopReason ?? error;
  }

  /** Lost, handed back, timed out or asleep: no step may run. */
  private throwIfStopped(): void {
    const reason = this.run.stopReason;
    if (reason) throw reason;
  }
}

/** The step's answer as JSON holds it (undefined: null); what JSON cannot hold is refused. */
function jsonValue(name: string, value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (error) {
    throw new InvalidArgumentError(
      'value',
      `step "${name}" answered a value JSON cannot hold: ${(error as Error).message}`,
    );
  }
  if (text === undefined)
    throw new InvalidArgumentError(
      'value',
      `step "${name}" answered a ${typeof value}, which JSON cannot hold`,
    );
  return JSON.parse(text) as unknown;
}

/** A recorded sleep's instant; a step of that name that is not a sleep is refused. */
function sleepInstant(name: string, value: unknown): Date {
  const until = typeof value === 'string' ? new Date(value) : undefined;
  if (!until || Number.isNaN(until.getTime()) || until.toISOString() !== value)
    throw new InvalidArgumentError('name', `"${name}" was recorded by ctx.step, not ctx.sleep`);
  return until;
}
