/**
 * Waiting for a job to finish (decision 0249): what `queue.waitFor`, `lh.jobs.waitUntilFinished`
 * and GET /api/jobs/:id/wait share. One registry per Leasehold.
 *
 * Wake-up: a waiter subscribes to topic `job-finished` (one subscription for every waiter of
 * this process, held while any waits), then marks its job as waited for (`jobWatch`). Only then
 * do the statements that finish the job notify, once per statement, with the ids of the waited
 * jobs they finished; a job nobody waits for costs its completion nothing. The mark is made
 * after the subscription and answers the job as last committed, so a finish that commits after
 * the mark is notified to a listener already listening, and one that committed before is seen
 * in the mark's answer.
 *
 * Fallback: notifications are hints (a reconnect loses some; a pgbouncer in transaction mode has
 * no LISTEN), so a waiter also reads its job again: every POLL_MS while it listens; without a
 * listener, from FIRST_POLL_MS doubling up to POLL_MS, and without marking the job (no one in
 * this process could hear its notification). A reconnect of the listener wakes every waiter.
 */
import { nap } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import type { Job } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import { JOB_FINISHED_TOPIC, finishedIds } from '../engine/jobs.js';
import type { Subscription } from '../engine/notifications.js';
import type { ResolvedWait } from './wait-options.js';

/** Longest sleep between two reads of a waited job. */
export const POLL_MS = 1_000;
/** First sleep of a waiter that cannot listen; doubled up to POLL_MS. */
export const FIRST_POLL_MS = 50;

export function isFinished(job: Job): boolean {
  return job.status === 'completed' || job.status === 'dead' || job.status === 'cancelled';
}

export class JobWaiters {
  /** Wake-ups by job id: each waiter's own. */
  private readonly waiting = new Map<number, Set<() => void>>();
  private count = 0;
  /** The shared subscription (undefined inside when listening failed: waiters then poll). */
  private subscription: Promise<Subscription | undefined> | undefined;

  constructor(private readonly engine: Engine) {}

  /**
   * Job `id` once it is finished; or as it is when `timeoutMs` passed (not finished); null when
   * there is no such job (deleted meanwhile included) or, with `queue`, it is of another queue.
   */
  async untilFinished(id: number, o: ResolvedWait, queue?: string): Promise<Job | null> {
    const clock = this.engine.clock;
    const giveUpAt = clock.monotonic() + o.timeoutMs;
    if (o.signal?.aborted) throw aborted(id, o.signal);
    const first = await this.engine.jobGet({ id });
    if (!first || (queue !== undefined && first.queue !== queue)) return null;
    if (isFinished(first) || o.timeoutMs <= 0) return first;

    // A wake-up that came while a read was running makes the next sleep end at once.
    let woken = false;
    let wakeSleeper: (() => void) | undefined;
    const wake = (): void => {
      woken = true;
      wakeSleeper?.();
    };
    const listening = await this.enter(id, wake);
    try {
      let job = listening ? await this.engine.jobWatch({ id }) : first;
      let delay = listening ? POLL_MS : FIRST_POLL_MS;
      for (;;) {
        if (!job || isFinished(job)) return job;
        const left = giveUpAt - clock.monotonic();
        if (left <= 0) return job;
        if (!woken) {
          const sleeping = nap(clock, Math.min(left, delay), o.signal);
          wakeSleeper = sleeping.wake;
          await sleeping.done;
          wakeSleeper = undefined;
        }
        if (o.signal?.aborted) throw aborted(id, o.signal);
        woken = false;
        delay = Math.min(delay * 2, POLL_MS);
        job = await this.engine.jobGet({ id });
      }
    } finally {
      this.leave(id, wake);
    }
  }

  /** Registers a wake-up for job `id`; true when a listener hears `job-finished`. */
  private async enter(id: number, wake: () => void): Promise<boolean> {
    let wakes = this.waiting.get(id);
    if (!wakes) this.waiting.set(id, (wakes = new Set()));
    wakes.add(wake);
    this.count++;
    if (!this.engine.capabilities.notifications) return false;
    this.subscription ??= this.engine
      .notifyListen({
        topic: JOB_FINISHED_TOPIC,
        onNotify: (payload) => this.dispatch(payload),
        onReconnect: () => this.dispatch(''),
      })
      .catch(() => undefined);
    return (await this.subscription) !== undefined;
  }

  private leave(id: number, wake: () => void): void {
    const wakes = this.waiting.get(id);
    wakes?.delete(wake);
    if (wakes?.size === 0) this.waiting.delete(id);
    if (--this.count > 0 || !this.subscription) return;
    const subscription = this.subscription;
    this.subscription = undefined;
    void subscription.then((s) => s?.unsubscribe()).catch(() => {});
  }

  /** Wakes the waiters of the ids named, or every waiter for '' (a reconnect, a long list). */
  private dispatch(payload: string): void {
    const ids = finishedIds(payload);
    const targets = ids === undefined ? [...this.waiting.keys()] : ids;
    for (const id of targets) for (const wake of [...(this.waiting.get(id) ?? [])]) wake();
  }
}

function aborted(id: number, signal: AbortSignal): AbortedError {
  return new AbortedError(`the wait for job ${id} was aborted`, signal.reason);
}
