/**
 * One claimed job inside a worker, from claim to the flush of its outcome.
 *
 * The job's signal fires when the worker must stop working on it:
 * - at the trust deadline `sentAt + leaseTtl - margin` unless a renewal confirmed the lease
 *   meanwhile (measured on the monotonic clock from the moment the claim or renewal was *sent*,
 *   so the deadline always falls before the database's expiry; see TrustDeadlines);
 * - when a renewal came back without the job (expired, cancelled, rescued, taken over);
 * - at the attempt's timeout (the job's own, or the worker's default): the run is then failed
 *   at once and the handler abandoned, though the lease stays ours (and renewed) until that
 *   failure is written, so it is the failure, not an expiry, that ends it;
 * - on a hard stop or when a drain hands the job back.
 *
 * The AbortController behind the signal is made on first use: most handlers never look at
 * their signal, and one controller per job was a measurable share of a fast worker's CPU (and
 * of its garbage). A signal asked for after the job was lost or timed out is born aborted, with
 * the reason.
 */
import type { Clock, Timer } from '../core/clock.js';
import { LeaseLostError, type JobTimeoutError } from '../core/errors.js';
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
  /** When the handler started (monotonic); set again when a job claimed ahead gets its slot. */
  startedAt: number;
  state: JobRunState = 'running';
  /** The handler completed the job in its own transaction: no separate completion is sent. */
  completedInTransaction = false;
  /** The handler's `ctx.sleep` ended the attempt: its outcome is ignored, its slot already free. */
  slept = false;
  /** Why the worker stopped trusting its lease; undefined while trusted. */
  private reason: Error | undefined;
  /** Set when the attempt ran past its timeout; its lease is still trusted. */
  private timeoutError: JobTimeoutError | undefined;
  /** The pending timeout of the attempt, cancelled when the run is done. */
  private timeoutTimer: Timer | undefined;
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
      const reason = this.stopReason;
      if (reason) this.controller.abort(reason);
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

  /** Why the handler must stop (lost, handed back or timed out); undefined while it may go on. */
  get stopReason(): Error | undefined {
    return this.reason ?? this.timeoutError;
  }

  /** The attempt ran past its timeout: it is failed, and the handler's outcome will be ignored. */
  get timedOut(): boolean {
    return this.timeoutError !== undefined;
  }

  /** Runs `onTimeout` after `timeoutMs` on `clock`, unless the run is done first. */
  armTimeout(clock: Clock, timeoutMs: number, onTimeout: () => void): void {
    this.timeoutTimer = clock.setTimer(timeoutMs, onTimeout);
  }

  /**
   * The handler ran past its timeout: its signal fires with `error` and the run moves on to
   * flushing its failure without it. The lease stays trusted (and renewed) until the failure
   * is written, so a slow flush does not turn a timeout into a lost lease.
   */
  timeOut(error: JobTimeoutError): void {
    if (this.state !== 'running' || this.timeoutError) return;
    this.timeoutError = error;
    this.state = 'flushing';
    if (!this.reason) this.controller?.abort(error);
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
    this.timeoutTimer?.cancel();
  }
}
