/**
 * One claimed job inside a worker, from claim to the flush of its outcome.
 *
 * The job's signal fires when the worker must stop working on it:
 * - at the trust deadline `sentAt + leaseTtl - margin` unless a renewal confirmed the lease
 *   meanwhile (measured on the monotonic clock from the moment the claim or renewal was *sent*,
 *   so the deadline always falls before the database's expiry; see TrustDeadlines);
 * - when a renewal came back without the job (expired, cancelled, rescued, taken over);
 * - on a hard stop or when a drain hands the job back.
 *
 * The AbortController behind the signal is made on first use: most handlers never look at
 * their signal, and one controller per job was a measurable share of a fast worker's CPU (and
 * of its garbage). A signal asked for after the job was lost is born aborted, with the reason.
 */
import { LeaseLostError } from '../core/errors.js';
import type { Job } from '../core/types.js';
import type { JobLeaseRef } from '../engine/jobs.js';
import type { Expirable, TrustDeadlines } from './trust-deadlines.js';

export type JobRunState =
  /** The handler is running. */
  | 'running'
  /** The handler has finished; its outcome waits for the next flush. */
  | 'flushing'
  /** The outcome is written, refused, or the job was handed back: nothing more to do. */
  | 'done';

export class JobRun implements Expirable {
  readonly job: Job;
  readonly ref: JobLeaseRef;
  readonly startedAt: number;
  state: JobRunState = 'running';
  /** The handler completed the job in its own transaction: no separate completion is sent. */
  completedInTransaction = false;
  /** Why the worker stopped trusting its lease; undefined while trusted. */
  private reason: Error | undefined;
  private controller: AbortController | undefined;

  constructor(
    job: Job,
    private readonly deadlines: TrustDeadlines<JobRun>,
    startedAt: number,
    claimSentAt: number,
  ) {
    this.job = job;
    this.ref = { id: job.id, generation: job.generation };
    this.startedAt = startedAt;
    this.confirm(claimSentAt);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get lost(): boolean {
    return this.reason !== undefined;
  }

  /** Why the job was lost (undefined while it is not). */
  get lostReason(): Error | undefined {
    return this.reason;
  }

  /** A claim or renewal sent at `sentAt` succeeded: trust the lease until the new deadline. */
  confirm(sentAt: number): void {
    if (this.lost || this.state === 'done') return;
    this.deadlines.trustFrom(this, sentAt);
  }

  /** The trust deadline passed without a renewal. */
  expire(): void {
    this.abort(
      new LeaseLostError(`job:${this.job.id}`, 'the trust deadline passed without a renewal'),
    );
  }

  /** Stops the handler's work: its signal fires with `reason`. */
  abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.deadlines.forget(this);
    this.controller?.abort(reason);
  }

  finish(): void {
    this.state = 'done';
    this.deadlines.forget(this);
  }
}
