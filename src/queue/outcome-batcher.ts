/**
 * Completions and failures wait a short flush window and then go to the database together:
 * one statement for all completions and one for all failures of the window. Under load this
 * turns thousands of tiny transactions into a few large ones; idle, it costs at most the window.
 *
 * Safety: until its outcome is flushed a job stays `processing` with its lease renewed, so a
 * crash before the flush only delays the job (it is rescued after its lease expires and runs
 * again), never loses it. A flush that fails is retried with backoff while the lease lives.
 */
import { backoffDelay } from '../core/backoff.js';
import type { Clock, Timer } from '../core/clock.js';
import { removableOnComplete } from '../core/flows.js';
import type { Engine } from '../engine/engine.js';
import type { JobFailOutcome } from '../engine/jobs.js';
import type { JobRun } from './job-run.js';
import type { FailureDecision } from './retry-policy.js';

interface PendingCompletion {
  run: JobRun;
  result: unknown;
  resolve: (accepted: boolean) => void;
}

interface PendingFailure {
  run: JobRun;
  decision: FailureDecision;
  resolve: (outcome: JobFailOutcome['outcome'] | null) => void;
}

export interface OutcomeBatcherOptions {
  engine: Engine;
  workerId: string;
  clock: Clock;
  /** How long an outcome may wait for company; 0 flushes on the next tick. */
  flushWindowMs: number;
  /** Flush at once when this many outcomes wait. */
  maxBatch: number;
  /** Delete completed jobs instead of keeping them (the worker's `removeOnComplete`). */
  removeOnComplete: boolean;
  onFlushError: (error: unknown) => void;
}

export class OutcomeBatcher {
  private completions: PendingCompletion[] = [];
  private failures: PendingFailure[] = [];
  private timer: Timer | undefined;
  private flushing: Promise<void> | undefined;
  private retries = 0;

  constructor(private readonly o: OutcomeBatcherOptions) {}

  /**
   * Calls `written` with true once the completion is stored, false when the job was no longer
   * ours. A callback, not a promise: this is every job's path, and each promise a job makes is
   * paid again by every promise hook in the process (AsyncLocalStorage on Node 20, decision
   * 0271). `written` must not throw: it is called in the loop that tells the whole batch.
   */
  complete(run: JobRun, result: unknown, written: (accepted: boolean) => void): void {
    this.completions.push({ run, result, resolve: written });
    this.schedule();
  }

  /** Resolves with what became of the job, or null when it was no longer ours. */
  fail(run: JobRun, decision: FailureDecision): Promise<JobFailOutcome['outcome'] | null> {
    return new Promise((resolve) => {
      this.failures.push({ run, decision, resolve });
      this.schedule();
    });
  }

  get pending(): number {
    return this.completions.length + this.failures.length;
  }

  /** Writes everything waiting now; resolves when it is written (or given up on). */
  async flush(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (this.pending === 0) return;
    this.flushing = this.writeBatch();
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
    if (this.pending > 0) this.schedule();
  }

  private schedule(): void {
    if (this.pending >= this.o.maxBatch) {
      // A flush under way schedules again when it ends; a waiter per outcome would only pile
      // up promises (thousands a second under load).
      if (!this.flushing) void this.flush();
      return;
    }
    if (this.timer) return;
    this.timer = this.o.clock.setTimer(this.o.flushWindowMs, () => {
      this.timer = undefined;
      void this.flush();
    });
  }

  /**
   * One completion statement; two when removing completed jobs and some belong to a flow: a
   * flow's child is kept, since its parent reads its result (decision 0255).
   */
  private async writeCompletions(completions: readonly PendingCompletion[]): Promise<number[]> {
    if (completions.length === 0) return [];
    const { engine, workerId } = this.o;
    const write = (batch: readonly PendingCompletion[], remove: boolean): Promise<number[]> =>
      batch.length === 0
        ? Promise.resolve([])
        : engine.jobComplete({
            workerId,
            // Fields named, not `...ref`: a spread plus a field costs 0.39 µs a job, this 0.05.
            jobs: batch.map(({ run: { ref }, result }) => ({
              id: ref.id,
              generation: ref.generation,
              result: result ?? null,
            })),
            remove,
          });
    if (!this.o.removeOnComplete) return write(completions, false);
    const removable = completions.filter((c) => removableOnComplete(c.run.job));
    if (removable.length === completions.length) return write(completions, true);
    const kept = completions.filter((c) => !removableOnComplete(c.run.job));
    return (await Promise.all([write(removable, true), write(kept, false)])).flat();
  }

  private async writeBatch(): Promise<void> {
    const completions = this.completions.splice(0, this.o.maxBatch);
    const failures = this.failures.splice(0, this.o.maxBatch);
    const { engine, workerId } = this.o;
    try {
      const [accepted, failed] = await Promise.all([
        this.writeCompletions(completions),
        failures.length === 0
          ? []
          : engine.jobFail({
              workerId,
              jobs: failures.map((f) => ({
                id: f.run.ref.id,
                generation: f.run.ref.generation,
                error: f.decision.error,
                retryDelayMs: f.decision.retryDelayMs,
                final: f.decision.final,
              })),
            }),
      ]);
      this.retries = 0;
      const acceptedIds = new Set(accepted);
      for (const c of completions) c.resolve(acceptedIds.has(c.run.ref.id));
      const outcomes = new Map(failed.map((f) => [f.id, f.outcome]));
      for (const f of failures) f.resolve(outcomes.get(f.run.ref.id) ?? null);
    } catch (error) {
      this.o.onFlushError(error);
      // Put back what is still worth writing; a lost lease will be rescued by maintenance.
      for (const c of completions) if (c.run.lost) c.resolve(false);
      for (const f of failures) if (f.run.lost) f.resolve(null);
      this.completions.unshift(...completions.filter((c) => !c.run.lost));
      this.failures.unshift(...failures.filter((f) => !f.run.lost));
      this.retries++;
      await new Promise<void>((resolve) =>
        this.o.clock.setTimer(backoffDelay({ baseMs: 50, capMs: 2_000 }, this.retries), resolve),
      );
    }
  }
}
