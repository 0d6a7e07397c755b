/**
 * The step family of the engine seam (workflow steps and sleeps, decision 0254): what a job's
 * handler does once, whatever the number of times the job runs.
 *
 * Rules every engine obeys (the conformance suite checks each, through `ctx.step`/`ctx.sleep`):
 * - A step is recorded at most once per (job, name). Its record is written in the same
 *   transaction as the step function's own writes (its `tx`), guarded by the job's ownership
 *   exactly as a renewal is: right worker, right generation, still processing, lease unexpired
 *   on the engine's clock. A guard that does not match, or a name already recorded (which only
 *   a stale holder can meet: the owner loads the records before it runs a step), rolls the
 *   whole step back and answers `{ recorded: false }`; nothing the function wrote commits.
 * - The record is linearised at its commit: while it is being written the job cannot change
 *   hands (PostgreSQL holds the job row FOR SHARE until COMMIT; memory checks and records in one
 *   synchronous turn).
 * - Effects registered with `tx.onCommit` run only after the step committed, in order.
 * - A sleep is one guarded operation: the job goes back to pending, available at its wake-up
 *   instant, its attempt given back (a sleep is not a failure), its lease cleared, and the sleep
 *   recorded as a step whose value is that instant (an ISO string). A sleep whose name is
 *   already recorded (woken early, by an admin retry) keeps the recorded instant.
 * - Steps belong to their job: deleted with it; kept by `jobRetry`, so a retried dead job
 *   resumes after its last recorded step.
 * - Every time comparison uses the engine's clock (`coalesce($now, now())` on PostgreSQL).
 */
import { ConflictError, InvalidArgumentError } from '../core/errors.js';
import type { JobStep } from '../core/types.js';
import type { JobLeaseRef } from './jobs.js';
import type { CallerTransaction } from './types.js';

/** The most characters a step's name may have. */
export const STEP_NAME_MAX_LENGTH = 200;

/**
 * The transaction a step function runs in: `query` joins the step's transaction (PostgreSQL;
 * the memory engine runs no SQL and rejects), and `onCommit` registers an effect that runs only
 * if the step commits (the memory engine's way of writing "through the transaction").
 */
export interface StepTransaction extends CallerTransaction {
  onCommit(effect: () => void): void;
}

export interface JobStepRunParams {
  workerId: string;
  ref: JobLeaseRef;
  /** Validated above the engine (non-empty, at most STEP_NAME_MAX_LENGTH characters). */
  name: string;
  /**
   * Runs inside the step's transaction; answers the value to record, a JSON value (checked
   * above the engine). What it throws rolls the step back and is the operation's rejection.
   */
  body: (tx: StepTransaction) => Promise<unknown>;
}

export type JobStepOutcome =
  | { readonly recorded: true; readonly value: unknown; readonly recordedAt: Date }
  /** The job is no longer the caller's (or the name was recorded by another run): rolled back. */
  | { readonly recorded: false };

export interface JobSleepParams {
  workerId: string;
  ref: JobLeaseRef;
  name: string;
  /** From the engine's now; ignored when `name` is already recorded (its instant is kept). */
  delayMs: number;
}

export interface StepOperations {
  /** The job's recorded steps in recording order; empty for an unknown job. */
  jobSteps(params: { id: number }): Promise<JobStep[]>;
  /** Runs `body` in a transaction and records its answer with it, guarded by ownership. */
  jobStepRun(params: JobStepRunParams): Promise<JobStepOutcome>;
  /**
   * Ends the attempt: back to pending until the wake-up instant, the attempt given back, the
   * sleep recorded. Null (nothing changed) when the job is no longer the caller's.
   */
  jobSleep(params: JobSleepParams): Promise<{ until: Date } | null>;
}

/**
 * The effects a step function registers with `tx.onCommit`: run after the step committed,
 * dropped when it did not. Once the function has returned (sealed) no more are taken: its
 * transaction is over.
 */
export class CommitEffects {
  private readonly effects: (() => void)[] = [];
  private open = true;

  add(effect: unknown): void {
    if (typeof effect !== 'function')
      throw new InvalidArgumentError('effect', 'must be a function');
    if (!this.open)
      throw new ConflictError('the step is over: its transaction can no longer be used');
    this.effects.push(effect as () => void);
  }

  /** The step function has returned: later registrations are refused. */
  seal(): void {
    this.open = false;
  }

  /**
   * The step committed: runs every effect in order. One that throws does not stop the others;
   * the first error is thrown once all ran (the step stays recorded).
   */
  commit(): void {
    this.open = false;
    let failure: { error: unknown } | undefined;
    for (const effect of this.effects.splice(0)) {
      try {
        effect();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  discard(): void {
    this.open = false;
    this.effects.length = 0;
  }
}

/** A step's value as text for a jsonb parameter (undefined became null above the engine). */
export function stepValueText(value: unknown): string {
  return JSON.stringify(value ?? null) ?? 'null';
}
