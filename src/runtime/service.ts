/**
 * The one skeleton every background loop shares (election, producer, rescuer, sweeper, pruner,
 * generator…). A subclass implements `runOnce()`, which does one unit of work and returns what
 * it did; the skeleton runs it on a jittered interval after a staggered first run, on an
 * injected clock, and `stop()` waits for an iteration in flight instead of busy-waiting.
 *
 * `runOnce()` is public so tests (and the CLI) can drive a service step by step. A failing
 * iteration is reported through `onError` and the loop carries on: a background service that
 * dies on the first database hiccup is a reliability bug.
 */
import { jitter } from '../core/backoff.js';
import type { Clock, Timer } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { silentLogger, type Logger } from './logger.js';

export interface ServiceOptions {
  clock?: Clock;
  logger?: Logger;
  /** Time between iterations, in ms. */
  intervalMs: number;
  /** ± this fraction of the interval, so a fleet of processes does not poll in lock step. Default 0.1. */
  jitterFraction?: number;
  /** Delay before the first run; default a random point within the first interval. */
  firstRunDelayMs?: number;
  random?: () => number;
}

export type ServiceState = 'idle' | 'running' | 'stopping' | 'stopped';

export abstract class BackgroundService<Result = void> {
  readonly name: string;
  protected readonly clock: Clock;
  protected readonly logger: Logger;
  protected intervalMs: number;
  private readonly jitterFraction: number;
  private readonly firstRunDelayMs: number | undefined;
  private readonly random: () => number;
  private timer: Timer | undefined;
  private inFlight: Promise<unknown> | undefined;
  private status: ServiceState = 'idle';
  private readonly stopController = new AbortController();

  constructor(name: string, options: ServiceOptions) {
    this.name = name;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.intervalMs = options.intervalMs;
    this.jitterFraction = options.jitterFraction ?? 0.1;
    this.firstRunDelayMs = options.firstRunDelayMs;
    this.random = options.random ?? Math.random;
  }

  /** One unit of work; returns what it did (e.g. `{ rescued: 3 }`). */
  abstract runOnce(): Promise<Result>;

  get state(): ServiceState {
    return this.status;
  }

  /** Aborts when `stop()` is called: long iterations should pass it to what they await. */
  protected get stopSignal(): AbortSignal {
    return this.stopController.signal;
  }

  start(): void {
    if (this.status !== 'idle') return;
    this.status = 'running';
    const first = this.firstRunDelayMs ?? Math.floor(this.random() * this.intervalMs);
    this.schedule(first);
  }

  /** Runs the next iteration now instead of waiting for the timer (e.g. on a notification). */
  poke(): void {
    if (this.status !== 'running' || this.inFlight) return;
    this.timer?.cancel();
    this.schedule(0);
  }

  async stop(): Promise<void> {
    if (this.status === 'stopped') return;
    this.status = 'stopping';
    this.stopController.abort(new Error(`${this.name} stopped`));
    this.timer?.cancel();
    await this.inFlight?.catch(() => {});
    this.status = 'stopped';
  }

  /** Called with the error of a failed iteration; the loop goes on. */
  protected onError(error: unknown): void {
    this.logger.warn({ service: this.name, err: error }, `${this.name} iteration failed`);
  }

  /** The delay before the next iteration; override to back off when idle or after errors. */
  protected nextDelay(_result: Result | undefined, _failed: boolean): number {
    return jitter(this.intervalMs, this.jitterFraction, this.random);
  }

  private schedule(delayMs: number): void {
    this.timer = this.clock.setTimer(delayMs, () => void this.tick());
  }

  private async tick(): Promise<void> {
    if (this.status !== 'running') return;
    let result: Result | undefined;
    let failed = false;
    const iteration = this.runOnce();
    this.inFlight = iteration;
    try {
      result = await iteration;
    } catch (error) {
      failed = true;
      this.onError(error);
    } finally {
      this.inFlight = undefined;
    }
    if (this.status === 'running') this.schedule(this.nextDelay(result, failed));
  }
}
