/**
 * One claimed task, kept alive over HTTP: renewed every `renewEveryMs`, and a signal that fires
 * (by its own timer) at the trust deadline `sentAt + lease - margin` unless a renewal confirmed
 * the claim, or at once when the service answers that the claim is gone
 * (409 lease_lost / task_done): work on a task we no longer own must stop immediately.
 */
import type { Clock, Timer } from '../core/clock.js';
import { LeaseLostError, isLeaseholdError } from '../core/errors.js';
import type { ClaimRef, Task, TaskClient } from '../client/task-client.js';

export interface TaskClaimOptions {
  client: TaskClient;
  /** This worker's id (sent as the task API's `processor`). */
  workerId: string;
  task: Task;
  /** Monotonic time at which the claim request was sent. */
  sentAt: number;
  leaseMs: number;
  marginMs: number;
  renewEveryMs: number;
  clock: Clock;
}

export class TaskClaim {
  private readonly controller = new AbortController();
  private deadlineTimer: Timer | undefined;
  private renewTimer: Timer | undefined;
  private ended = false;

  constructor(private readonly o: TaskClaimOptions) {
    this.armDeadline(o.sentAt);
    this.scheduleRenew();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The claim as the task API names it: the worker id travels as `processor`. */
  get claim(): ClaimRef {
    return { processor: this.o.workerId, token: this.o.task.token };
  }

  /** Stops renewals and the deadline; the work is over (completed, failed or abandoned). */
  end(): void {
    this.ended = true;
    this.deadlineTimer?.cancel();
    this.renewTimer?.cancel();
  }

  private lose(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.end();
    this.controller.abort(new LeaseLostError(`task:${this.o.task.id}`, reason));
  }

  private armDeadline(sentAt: number): void {
    this.deadlineTimer?.cancel();
    const delay = sentAt + this.o.leaseMs - this.o.marginMs - this.o.clock.monotonic();
    this.deadlineTimer = this.o.clock.setTimer(delay, () =>
      this.lose('the trust deadline passed without a confirmed renewal'),
    );
  }

  private scheduleRenew(): void {
    this.renewTimer = this.o.clock.setTimer(this.o.renewEveryMs, () => void this.renew());
  }

  private async renew(): Promise<void> {
    if (this.ended) return;
    const sentAt = this.o.clock.monotonic();
    try {
      await this.o.client.renew(this.o.task.id, this.claim, {
        leaseSeconds: this.o.leaseMs / 1000,
        signal: this.controller.signal,
      });
      if (this.ended) return;
      this.armDeadline(sentAt);
    } catch (error) {
      if (isLeaseholdError(error, 'lease_lost') || isLeaseholdError(error, 'task_done')) {
        this.lose(`the service refused the renewal: ${error.message}`);
        return;
      }
      // Unreachable service: keep trying; the deadline timer bounds how long we trust.
    }
    if (!this.ended) this.scheduleRenew();
  }
}
