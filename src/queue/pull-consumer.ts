/**
 * The pull consumer of a queue (seed 004; decision 0246): callers take messages when they are
 * ready for them instead of registering a handler. Every call is one claim statement, the same
 * one the push worker runs, so pull and push consumers serve one queue side by side with the
 * same fencing, limits and partition order.
 *
 * Waiting: a claim that finds nothing listens for the queue's notification (enqueue, retry,
 * settings change) and claims again when one comes, or after POLL_MS in case a notification was
 * lost or the engine has none (pgbouncer in transaction mode). It subscribes before its second
 * claim, so a job enqueued between the first claim and the subscription is not missed.
 */
import { randomBytes } from 'node:crypto';
import { nap } from '../core/clock.js';
import { AbortedError, isLeaseholdError } from '../core/errors.js';
import { removableOnComplete } from '../core/flows.js';
import type { Engine } from '../engine/engine.js';
import { JOBS_TOPIC, type JobCompletion } from '../engine/jobs.js';
import { Coalescer } from '../runtime/coalescer.js';
import type { Subscription } from '../engine/notifications.js';
import { Message, type MessageContext } from './message.js';
import { PROGRESS_INTERVAL_MS, ProgressWriter } from './progress-writer.js';
import { RECEIVE_LIMITS, type ResolvedReceive } from './receive-options.js';

/** Longest sleep between two claims of a waiting receive when no notification comes. */
export const POLL_MS = 1_000;

export class PullConsumer {
  readonly receiverId = `receiver-${randomBytes(6).toString('hex')}`;
  /** What the messages of this receiver ack, nack and extend through: keeping acked jobs… */
  private readonly keeping: MessageContext;
  /** …or deleting them (`removeOnAck`). */
  private readonly removing: MessageContext;

  constructor(
    private readonly engine: Engine,
    private readonly queue: string,
  ) {
    // A failed progress write is tried again on the next turn; the receiver has no event stream
    // to report it on, and a message whose lease is gone learns it from its next call anyway.
    const progress = new ProgressWriter({
      engine,
      ownerId: this.receiverId,
      clock: engine.clock,
      intervalMs: PROGRESS_INTERVAL_MS,
      onError: () => {},
    });
    const context = (remove: boolean): MessageContext => {
      const completions = acks(engine, this.receiverId, remove);
      return {
        engine,
        clock: engine.clock,
        receiverId: this.receiverId,
        complete: (job) => completions.run(job),
        progress,
      };
    };
    this.keeping = context(false);
    this.removing = context(true);
  }

  /** Claims up to `max` messages, waiting up to `waitMs` (0: one claim) for the first. */
  async receive<P>(o: ResolvedReceive): Promise<Message<P>[]> {
    const clock = this.engine.clock;
    const giveUpAt = clock.monotonic() + o.waitMs;
    let subscription: Subscription | undefined;
    // A notification that came while a claim was running wakes the next wait at once.
    let notified = false;
    let wake: (() => void) | undefined;
    const onNotify = (): void => {
      notified = true;
      wake?.();
    };
    try {
      for (;;) {
        if (o.signal?.aborted) throw aborted(o.signal);
        notified = false;
        const sentAt = clock.monotonic();
        const jobs = await this.engine.jobClaimBatch({
          queues: [this.queue],
          workerId: this.receiverId,
          limit: o.max,
          leaseTtlMs: o.visibilityMs,
        });
        if (jobs.length > 0)
          return jobs.map(
            (job) =>
              new Message<P>(
                job,
                o.removeOnAck && removableOnComplete(job) ? this.removing : this.keeping,
                o.visibilityMs,
                sentAt,
              ),
          );
        const left = giveUpAt - clock.monotonic();
        if (left <= 0) return [];
        if (!subscription && this.engine.capabilities.notifications) {
          subscription = await this.engine.notifyListen({
            topic: JOBS_TOPIC,
            onNotify: (queue) => {
              if (queue === this.queue || queue === '') onNotify();
            },
            onReconnect: onNotify,
          });
          continue; // claim once more: a job may have come before the listener listened
        }
        if (notified) continue;
        const sleeping = nap(clock, Math.min(left, POLL_MS), o.signal);
        wake = sleeping.wake;
        await sleeping.done;
        wake = undefined;
      }
    } finally {
      await subscription?.unsubscribe().catch(() => {});
    }
  }
}

/**
 * Acks in flight at once go to the database as one completion statement (a receiveMany's
 * messages acked with Promise.all cost one round trip and one commit, as a worker's batch), up
 * to a whole receiveMany's worth. An ack whose statement's answer was lost fails with that
 * `unavailable` error, never retried.
 */
function acks(
  engine: Engine,
  receiverId: string,
  remove: boolean,
): Coalescer<JobCompletion, boolean> {
  const complete = async (jobs: readonly JobCompletion[]): Promise<boolean[]> => {
    const accepted = new Set(await engine.jobComplete({ workerId: receiverId, jobs, remove }));
    return jobs.map((job) => accepted.has(job.id));
  };
  return new Coalescer<JobCompletion, boolean>({
    one: async (job) => (await complete([job]))[0]!,
    many: complete,
    key: (job) => String(job.id),
    maxBatch: RECEIVE_LIMITS.maxMessages,
    failWhole: (error) =>
      isLeaseholdError(error, 'unavailable') && error.details.outcome === 'unknown'
        ? error
        : undefined,
  });
}

function aborted(signal: AbortSignal): AbortedError {
  return new AbortedError('receive was aborted while waiting for a message', signal.reason);
}
