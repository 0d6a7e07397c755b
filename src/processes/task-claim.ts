/**
 * One claimed task, kept alive over HTTP: heartbeats every `heartbeatEveryMs`, and a signal
 * that fires (by its own timer) at the trust deadline `sentAt + lease - margin` unless a
 * heartbeat confirmed the claim, or at once when the service answers that the claim is gone
 * (409 lease_lost / task_done): work on a task we no longer own must stop immediately.
 */
import type { Clock, Timer } from '../core/clock.js';
import { LeaseLostError, isLeaseholdError } from '../core/errors.js';
import type { Task, TaskClient } from '../client/task-client.js';

export interface TaskClaimOptions {
  client: TaskClient;
  processor: string;
  task: Task;
  /** Monotonic time at which the claim request was sent. */
  sentAt: number;
  leaseMs: number;
  marginMs: number;
  heartbeatEveryMs: number;
  clock: Clock;
}

export class TaskClaim {
  private readonly controller = new AbortController();
  private deadlineTimer: Timer | undefined;
  private heartbeatTimer: Timer | undefined;
  private ended = false;

  constructor(private readonly o: TaskClaimOptions) {
    this.armDeadline(o.sentAt);
    this.scheduleHeartbeat();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get claim(): { processor: string; token: number } {
    return { processor: this.o.processor, token: this.o.task.token };
  }

  /** Stops heartbeats and the deadline; the work is over (completed, failed or abandoned). */
  end(): void {
    this.ended = true;
    this.deadlineTimer?.cancel();
    this.heartbeatTimer?.cancel();
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
      this.lose('the trust deadline passed without a confirmed heartbeat'),
    );
  }

  private scheduleHeartbeat(): void {
    this.heartbeatTimer = this.o.clock.setTimer(this.o.heartbeatEveryMs, () => void this.beat());
  }

  private async beat(): Promise<void> {
    if (this.ended) return;
    const sentAt = this.o.clock.monotonic();
    try {
      await this.o.client.heartbeat(this.o.task.id, this.claim, {
        leaseSeconds: this.o.leaseMs / 1000,
        signal: this.controller.signal,
      });
      if (this.ended) return;
      this.armDeadline(sentAt);
    } catch (error) {
      if (isLeaseholdError(error, 'lease_lost') || isLeaseholdError(error, 'task_done')) {
        this.lose(`the service refused the heartbeat: ${error.message}`);
        return;
      }
      // Unreachable service: keep trying; the deadline timer bounds how long we trust.
    }
    if (!this.ended) this.scheduleHeartbeat();
  }
}
