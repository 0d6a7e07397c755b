/**
 * The task worker of seed 000, over HTTP: claim the next task, keep the claim alive by
 * renewing it while doing the work, then complete it with the claim's token. A refused
 * renewal aborts the work at once; a task whose work throws is reported as failed (retried
 * by the queue with backoff, dead-lettered at its last attempt). `crashRate` makes the process
 * die mid-task on purpose, so the demo shows a claim expiring and another worker taking over.
 */
import { systemClock, sleep, type Clock } from '../core/clock.js';
import { jitter } from '../core/backoff.js';
import { isLeaseholdError } from '../core/errors.js';
import { defaultMargin } from '../core/trust.js';
import type { Task, TaskClient } from '../client/task-client.js';
import { TypedEvents } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import { crashDelayMs, demoWork } from './demo-work.js';
import { HttpWorkerPresence, type HttpWorkerPresenceOptions } from './http-worker-presence.js';
import { TaskClaim } from './task-claim.js';

/** Tries at sending a task's outcome when the service does not answer (see answer()). */
const OUTCOME_ATTEMPTS = 5;
/** Spread of the idle poll interval (±25%). */
const POLL_JITTER = 0.25;

export interface TaskWorkerEvents {
  'task:claimed': { id: number; token: number };
  'task:completed': { id: number; token: number };
  'task:abandoned': { id: number; token: number; reason: string };
  'task:failed': { id: number; token: number; error: string };
  'task:refused': { id: number; token: number; code: string };
  'task:handed-back': { id: number; token: number };
  'worker:idle': Record<string, never>;
  'worker:error': { error: string };
  [name: string]: unknown;
}

export interface HttpTaskWorkerOptions {
  client: TaskClient;
  /** This worker's id (sent as the task API's `processor`). */
  workerId: string;
  /** Claim duration asked of the service (default 10 s). */
  leaseMs?: number;
  /** How often the claim is renewed (default lease / 3). */
  renewEveryMs?: number;
  /** Wait between polls when no task is ready (default 500 ms, ±25%). */
  pollIntervalMs?: number;
  /** The work; receives the claim's signal. Default: sleep `task_data.sleep_duration_seconds`. */
  work?: (task: Task, signal: AbortSignal) => Promise<unknown>;
  /** Chance per task of dying mid-task, 0..1 (default 0). */
  crashRate?: number;
  /** How to die; injected so tests can observe instead of exiting. */
  crash?: () => void;
  clock?: Clock;
  random?: () => number;
  /**
   * The worker's row in the service's workers list (decision 0264): on by default, so operators
   * see HTTP task workers beside the library's; `false` leaves the list alone.
   */
  presence?: false | Pick<HttpWorkerPresenceOptions, 'registration' | 'intervalMs'>;
  logger?: Logger;
}

export class HttpTaskWorker {
  readonly events = new TypedEvents<TaskWorkerEvents>();
  private readonly stopController = new AbortController();
  /** Aborts the work in hand on shutdown, so its task is handed back instead of awaited. */
  private readonly handBackController = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly leaseMs: number;
  private readonly presence: HttpWorkerPresence | undefined;
  /** Tasks in hand: 0 or 1, this worker runs one at a time. */
  private inHand = 0;

  constructor(private readonly o: HttpTaskWorkerOptions) {
    this.clock = o.clock ?? systemClock;
    this.random = o.random ?? Math.random;
    this.leaseMs = o.leaseMs ?? 10_000;
    this.presence =
      o.presence === false
        ? undefined
        : new HttpWorkerPresence({
            client: o.client,
            workerId: o.workerId,
            clock: this.clock,
            inFlight: () => this.inHand,
            ...(o.logger ? { logger: o.logger } : {}),
            ...o.presence,
          });
  }

  start(): void {
    if (this.loop) return;
    this.presence?.start();
    this.loop = this.run();
  }

  /**
   * Stops claiming. With `handBack` (the default) the work in hand is aborted and its task handed
   * back at once, so a shutdown costs the queue nothing; without it, the task in hand finishes.
   */
  async stop({ handBack = true }: { handBack?: boolean } = {}): Promise<void> {
    this.stopController.abort(new Error('worker stopping'));
    if (handBack) this.handBackController.abort(new Error('worker stopping: handing back'));
    // The row says `draining` while the task in hand is handed back (or finished), side by
    // side with it so a slow service never holds the shutdown up twice, then `stopped`.
    await this.presence?.stop();
    await Promise.all([this.presence?.setStatus('draining'), this.loop]);
    this.inHand = 0;
    await this.presence?.setStatus('stopped');
  }

  private async run(): Promise<void> {
    const stopping = this.stopController.signal;
    while (!stopping.aborted) {
      let task: Task | null = null;
      const sentAt = this.clock.monotonic();
      try {
        task = await this.o.client.next(this.o.workerId, { leaseSeconds: this.leaseMs / 1000 });
      } catch (error) {
        this.events.emit('worker:error', { error: (error as Error).message });
      }
      if (task) {
        this.inHand = 1;
        try {
          await this.process(task, sentAt);
        } finally {
          this.inHand = 0;
        }
        continue;
      }
      this.events.emit('worker:idle', {});
      // Jittered, so idle workers do not poll in lock-step with a periodic producer: with a
      // fixed period one worker can stay just behind the others and never win a task.
      const wait = jitter(this.o.pollIntervalMs ?? 500, POLL_JITTER, this.random);
      await sleep(this.clock, wait, stopping).catch(() => {});
    }
  }

  private async process(task: Task, sentAt: number): Promise<void> {
    const ref = { id: task.id, token: task.token };
    this.events.emit('task:claimed', ref);
    const claim = new TaskClaim({
      client: this.o.client,
      workerId: this.o.workerId,
      task,
      sentAt,
      leaseMs: this.leaseMs,
      marginMs: defaultMargin(this.leaseMs),
      renewEveryMs: this.o.renewEveryMs ?? Math.floor(this.leaseMs / 3),
      clock: this.clock,
    });
    const crashAt = crashDelayMs(task.task_data, this.o.crashRate ?? 0, this.random);
    const crash =
      crashAt === undefined
        ? undefined
        : this.clock.setTimer(crashAt, () => (this.o.crash ?? (() => process.exit(3)))());
    let output: unknown;
    const signal = AbortSignal.any([claim.signal, this.handBackController.signal]);
    try {
      output = await (this.o.work ?? sleepWork(this.clock))(task, signal);
    } catch (error) {
      crash?.cancel();
      claim.end();
      if (this.handBackController.signal.aborted && !claim.signal.aborted) {
        await this.answer(() => this.o.client.handBack(task.id, claim.claim)).then(
          () => this.events.emit('task:handed-back', ref),
          (e: unknown) => this.refused(ref, e),
        );
        return;
      }
      if (claim.signal.aborted) {
        this.events.emit('task:abandoned', { ...ref, reason: String(claim.signal.reason) });
        return;
      }
      const message = (error as Error).message || String(error);
      await this.answer(() => this.o.client.fail(task.id, claim.claim, message)).then(
        () => this.events.emit('task:failed', { ...ref, error: message }),
        (e: unknown) => this.refused(ref, e),
      );
      return;
    }
    crash?.cancel();
    claim.end();
    if (claim.signal.aborted) {
      this.events.emit('task:abandoned', { ...ref, reason: String(claim.signal.reason) });
      return;
    }
    await this.answer(() => this.o.client.complete(task.id, claim.claim, output ?? null)).then(
      () => this.events.emit('task:completed', ref),
      (e: unknown) => this.refused(ref, e),
    );
  }

  /**
   * Sends a task's outcome, again when the service did not answer (behind a balancer, the
   * replica that took the request went away): the next attempt reaches another replica. Safe to
   * repeat: each outcome names the claim's token, so a repeat of one that did land is refused
   * (task_done, lease_lost), never applied twice. Given up on after OUTCOME_ATTEMPTS; the task's
   * lease then expires and it runs again.
   */
  private async answer<T>(send: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        const unanswered = isLeaseholdError(error) && error.code === 'unavailable';
        if (!unanswered || attempt >= OUTCOME_ATTEMPTS) throw error;
        await sleep(this.clock, 100 * attempt);
      }
    }
  }

  private refused(ref: { id: number; token: number }, error: unknown): void {
    if (isLeaseholdError(error)) this.events.emit('task:refused', { ...ref, code: error.code });
    else this.events.emit('worker:error', { error: String(error) });
  }
}

/** The seed's fake work: sleep `task_data.sleep_duration_seconds`, stopping when aborted. */
export function sleepWork(clock: Clock) {
  return (task: Task, signal: AbortSignal): Promise<unknown> =>
    demoWork(task.task_data, clock, signal);
}
