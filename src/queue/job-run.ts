/**
 * One claimed job inside a worker, from claim to the flush of its outcome.
 *
 * The job's signal fires when the worker must stop working on it:
 * - at the trust deadline `sentAt + leaseTtl - margin` unless a renewal confirmed the lease
 *   meanwhile (measured on the monotonic clock from the moment the claim or renewal was *sent*,
 *   so the deadline always falls before the database's expiry);
 * - when a renewal came back without the job (expired, cancelled, rescued, taken over);
 * - on a hard stop or when a drain hands the job back.
 * The deadline has its own timer, so a renewal stuck on a dead connection cannot delay it.
 */
import type { Clock, Timer } from '../core/clock.js';
import { LeaseLostError } from '../core/errors.js';
import type { Job } from '../core/types.js';
import type { JobLeaseRef } from '../engine/jobs.js';

export type JobRunState =
  /** The handler is running. */
  | 'running'
  /** The handler has finished; its outcome waits for the next flush. */
  | 'flushing'
  /** The outcome is written, refused, or the job was handed back: nothing more to do. */
  | 'done';

export class JobRun {
  readonly job: Job;
  readonly ref: JobLeaseRef;
  readonly startedAt: number;
  state: JobRunState = 'running';
  /** The handler completed the job in its own transaction: no separate completion is sent. */
  completedInTransaction = false;
  private readonly controller = new AbortController();
  private deadlineTimer: Timer | undefined;

  constructor(
    job: Job,
    private readonly clock: Clock,
    private readonly leaseTtlMs: number,
    private readonly marginMs: number,
    claimSentAt: number,
  ) {
    this.job = job;
    this.ref = { id: job.id, generation: job.generation };
    this.startedAt = clock.monotonic();
    this.confirm(claimSentAt);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get lost(): boolean {
    return this.controller.signal.aborted;
  }

  /** A claim or renewal sent at `sentAt` succeeded: trust the lease until the new deadline. */
  confirm(sentAt: number): void {
    if (this.lost || this.state === 'done') return;
    this.deadlineTimer?.cancel();
    const delay = sentAt + this.leaseTtlMs - this.marginMs - this.clock.monotonic();
    this.deadlineTimer = this.clock.setTimer(delay, () =>
      this.abort(
        new LeaseLostError(`job:${this.job.id}`, 'the trust deadline passed without a renewal'),
      ),
    );
  }

  /** Stops the handler's work: its signal fires with `reason`. */
  abort(reason: Error): void {
    if (this.controller.signal.aborted) return;
    this.deadlineTimer?.cancel();
    this.controller.abort(reason);
  }

  finish(): void {
    this.state = 'done';
    this.deadlineTimer?.cancel();
  }
}
