/**
 * A message of the pull consumer (decision 0246): one claimed job, held for its visibility
 * timeout. `ack`, `nack` and `extend` are fenced by `token` (the claim's generation): once the
 * visibility timeout has passed another receiver may hold the job, and the first one's call is
 * refused with `LeaseLostError` instead of touching the job. `signal` fires at the trust
 * deadline, `visibility - margin` after the claim (or the last extend) was sent, so work that
 * watches it stops before the database could give the job to someone else. `progress` reports
 * how far the work has got, throttled and fenced as a worker's `ctx.progress` (decision 0251).
 */
import type { Clock, Timer } from '../core/clock.js';
import { LeaseLostError, TaskDoneError } from '../core/errors.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import { defaultMargin } from '../core/trust.js';
import type { FencingToken, Job, JobProgress } from '../core/types.js';
import { requireJobProgress } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';
import type { JobCompletion } from '../engine/jobs.js';
import type { ProgressWriter } from './progress-writer.js';
import { visibilityMs } from './receive-options.js';

export interface MessageContext {
  readonly engine: Engine;
  readonly clock: Clock;
  /** The receiver's id: the job's `claimedBy`, and the owner every fenced call names. */
  readonly receiverId: string;
  /** Completes one job for the receiver (acks in flight together share a statement). */
  readonly complete: (completion: JobCompletion) => Promise<boolean>;
  /** Writes the receiver's progress reports, a few statements a second at most. */
  readonly progress: ProgressWriter;
}

export interface NackOptions {
  /** Visible again after this long (default at once). The attempt counts as a failure. */
  delay?: Duration;
  /** Recorded as the attempt's error (default "nacked"). */
  reason?: string;
}

type Settled = 'acked' | 'nacked' | 'lost';

export class Message<P = unknown> {
  readonly id: number;
  readonly payload: P;
  readonly type: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Which attempt this is, from 1. */
  readonly attempt: number;
  /** The claim's generation: the job's fencing token for this delivery. */
  readonly token: FencingToken;
  readonly job: Job;
  private readonly controller = new AbortController();
  private deadline: Timer | undefined;
  private settled: Settled | undefined;

  constructor(
    job: Job,
    private readonly ctx: MessageContext,
    visibility: number,
    sentAt: number,
  ) {
    this.job = job;
    this.id = job.id;
    this.payload = job.payload as P;
    this.type = job.type;
    this.headers = job.headers;
    this.attempt = job.attempts;
    this.token = job.generation;
    this.trustFrom(sentAt, visibility);
  }

  /**
   * Fires (reason: `LeaseLostError`) at the trust deadline, or when a call was refused; never
   * once the message is acked or nacked.
   */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Reports how far the work has got (a number from 0 to 100, or a JSON object of at most
   * 64 KiB), as a worker handler's `ctx.progress`: returns at once, written within 250 ms; a
   * value still unwritten at `ack` is dropped, at `nack` written first. A refused write means
   * the message is lost: its signal fires and the next call throws `LeaseLostError`.
   */
  progress(value: JobProgress): void {
    const progress = requireJobProgress('progress', value);
    this.checkOpen();
    this.ctx.progress.report({
      ref: { id: this.id, generation: this.token },
      progress,
      onRefused: () => {
        if (this.settled === undefined) this.lost('its progress write was refused');
      },
    });
  }

  /** Completes the job with `result` (any JSON value). */
  async ack(result?: unknown): Promise<void> {
    this.checkOpen();
    this.ctx.progress.forget(this.id);
    const accepted = await this.ctx.complete({
      id: this.id,
      generation: this.token,
      ...(result === undefined ? {} : { result }),
    });
    if (!accepted) throw this.lost('its ack was refused');
    this.settle('acked');
  }

  /**
   * Gives the job back as a failed attempt: visible again after `delay` (at once by default),
   * or dead-lettered when its attempts are spent. Answers which.
   */
  async nack(options: NackOptions = {}): Promise<'retried' | 'dead'> {
    const delayMs =
      options.delay === undefined ? 0 : toMilliseconds('delay', options.delay, { min: 0 });
    this.checkOpen();
    await this.ctx.progress.flushJob(this.id);
    this.checkOpen(); // a refused progress write has settled it as lost
    const [outcome] = await this.ctx.engine.jobFail({
      workerId: this.ctx.receiverId,
      jobs: [
        {
          id: this.id,
          generation: this.token,
          error: options.reason ?? 'nacked',
          retryDelayMs: delayMs,
        },
      ],
    });
    if (!outcome) throw this.lost('its nack was refused');
    this.settle('nacked');
    return outcome.outcome;
  }

  /** Keeps the message invisible for `visibility` more, counted from now. */
  async extend(visibility: Duration): Promise<void> {
    const ms = visibilityMs('visibility', visibility);
    this.checkOpen();
    const sentAt = this.ctx.clock.monotonic();
    const renewed = await this.ctx.engine.jobRenewLeases({
      workerId: this.ctx.receiverId,
      jobs: [{ id: this.id, generation: this.token }],
      leaseTtlMs: ms,
    });
    if (!renewed.some((r) => r.id === this.id)) throw this.lost('its extend was refused');
    this.trustFrom(sentAt, ms);
  }

  private trustFrom(sentAt: number, visibility: number): void {
    this.deadline?.cancel();
    const at = sentAt + visibility - defaultMargin(visibility);
    this.deadline = this.ctx.clock.setTimer(at - this.ctx.clock.monotonic(), () => {
      this.deadline = undefined;
      if (this.settled === undefined)
        this.controller.abort(
          new LeaseLostError(`job ${this.id}`, 'its visibility timeout is about to pass'),
        );
    });
    // The deadline only warns the work on this message, and that work holds the process open
    // itself. Held, one timer per unsettled message kept a script alive after `lh.close()` until
    // the last visibility timeout passed (ten minutes for 50,000 messages received with '10m').
    this.deadline.unref?.();
  }

  private checkOpen(): void {
    if (this.settled === 'acked' || this.settled === 'nacked')
      throw new TaskDoneError(this.id, this.settled);
    if (this.settled === 'lost')
      throw new LeaseLostError(`job ${this.id}`, 'a call on this message was refused before');
  }

  private lost(why: string): LeaseLostError {
    const error = new LeaseLostError(
      `job ${this.id}`,
      `${why}: its visibility timeout passed and another receiver may hold it (token ${this.token})`,
    );
    this.settle('lost', error);
    return error;
  }

  private settle(how: Settled, reason?: unknown): void {
    this.settled = how;
    this.deadline?.cancel();
    this.deadline = undefined;
    // Settled by us, the signal has nothing to say; refused, it says the message is lost.
    if (how === 'lost' && !this.controller.signal.aborted) this.controller.abort(reason);
  }
}
