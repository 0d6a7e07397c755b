/**
 * `lh.worker(...)`: runs handlers for claimed jobs. It is a composition of small parts:
 * - Producer: claims batches sized to free slots (SKIP LOCKED), woken by notifications;
 * - JobExecutor: runs each claimed job's handler (a JobRun) with its token, signal and timeout,
 *   in one of the worker's slots;
 * - Renewer: renews every in-flight lease in one statement per interval;
 * - OutcomeBatcher: completions and failures, one statement per flush window;
 * - ProgressWriter: handlers' `ctx.progress`, one statement per 250 ms at most (decision 0251);
 * - WorkerPresence: the row in the workers table.
 *
 * States: idle -> running -> draining -> stopped. `drain()` stops claiming, lets in-flight jobs
 * finish up to its timeout, then hands the rest back at once (their attempt is given back) so
 * no job waits for a lease to expire; `stop()` is a drain with no patience.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../core/clock.js';
import { systemClock } from '../core/clock.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import { AbortedError, ConflictError } from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import { TypedEvents } from '../runtime/events.js';
import { runUntilEmpty, type RunUntilEmptyResult } from './run-until-empty.js';
import type { WorkerEvents } from './worker-events.js';
import { silentLogger, type Logger } from '../runtime/logger.js';
import { JobExecutor } from './job-executor.js';
import type { JobRun } from './job-run.js';
import { noJobTracing, type CurrentJobTracing } from './job-tracing.js';
import { OutcomeBatcher } from './outcome-batcher.js';
import { Producer } from './producer.js';
import { PROGRESS_INTERVAL_MS, ProgressWriter } from './progress-writer.js';
import { Renewer } from './renewer.js';
import { WorkerPresence } from './worker-presence.js';
import {
  resolveWorkerOptions,
  type ResolvedWorkerOptions,
  type WorkerOptions,
} from './worker-options.js';

export type { WorkerEvents } from './worker-events.js';

export type WorkerState = 'idle' | 'running' | 'draining' | 'stopped';

export interface DrainResult {
  /** Jobs handed back to the queue because they did not finish within the timeout. */
  readonly handedBack: number;
}

export class Worker {
  readonly id: string;
  readonly events = new TypedEvents<WorkerEvents>();
  private readonly o: ResolvedWorkerOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /**
   * Every attempt in this worker, by run rather than by job id: a retry (or a woken sleeper)
   * can be claimed again by this worker while its earlier attempt's outcome is still on its way
   * back, and the two are different runs of one job.
   */
  private readonly runs = new Set<JobRun>();
  private status: WorkerState = 'idle';
  private readonly producer: Producer;
  private readonly renewer: Renewer;
  private readonly batcher: OutcomeBatcher;
  private readonly progress: ProgressWriter;
  private readonly executor: JobExecutor;
  private readonly presence: WorkerPresence;
  private drained: Promise<DrainResult> | undefined;

  constructor(
    private readonly engine: Engine,
    options: WorkerOptions,
    /** Tracing of handler runs, when installed (decision 0260). */
    tracing: CurrentJobTracing = noJobTracing,
  ) {
    this.o = resolveWorkerOptions(options);
    this.clock = options.clock ?? engine.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.id = options.id ?? `worker-${randomBytes(6).toString('hex')}`;
    const onError = (where: string) => (error: unknown) => {
      this.logger.warn({ err: error, worker: this.id }, `worker ${where} failed`);
      this.events.emit('worker:error', { where, error });
    };
    // The producer and the renewer call into the executor, made below once they exist.
    this.producer = new Producer({
      engine,
      clock: this.clock,
      workerId: this.id,
      queues: this.o.queues,
      types: this.o.claimTypes,
      leaseTtlMs: this.o.leaseTtlMs,
      pollIntervalMs: this.o.pollIntervalMs,
      cooldownMs: this.o.fetchCooldownMs,
      maxBatch: this.o.maxClaimBatch,
      slots: this.o.concurrency,
      notifications: this.o.notifications,
      freeSlots: () => this.executor.freeSlots,
      aheadRoom: () => this.executor.aheadRoom,
      claimTook: (ms) => this.executor.claimTook(ms),
      unwritten: () => this.executor.unwritten,
      dispatch: (job, sentAt) => this.executor.dispatch(job, sentAt),
      answered: (taken, asked) => this.events.emit('claim:answered', { taken, asked }),
      onError: onError('claim'),
    });
    this.renewer = new Renewer({
      engine,
      clock: this.clock,
      logger: this.logger,
      workerId: this.id,
      leaseTtlMs: this.o.leaseTtlMs,
      intervalMs: this.o.renewEveryMs,
      runs: () => this.runs.values(),
      onLost: (run) => this.executor.reportLost(run),
    });
    this.batcher = new OutcomeBatcher({
      engine,
      workerId: this.id,
      clock: this.clock,
      flushWindowMs: this.o.flushWindowMs,
      maxBatch: Math.max(this.o.concurrency, 100),
      removeOnComplete: this.o.removeOnComplete,
      onFlushError: onError('flush'),
    });
    this.progress = new ProgressWriter({
      engine,
      ownerId: this.id,
      clock: this.clock,
      intervalMs: PROGRESS_INTERVAL_MS,
      onError: onError('progress'),
    });
    this.executor = new JobExecutor({
      engine,
      workerId: this.id,
      options: this.o,
      clock: this.clock,
      logger: this.logger,
      random: options.random ?? Math.random,
      tracing,
      events: this.events,
      runs: this.runs,
      producer: this.producer,
      renewer: this.renewer,
      progress: this.progress,
      batcher: this.batcher,
    });
    this.presence = new WorkerPresence(
      engine,
      {
        id: this.id,
        name: options.name ?? `${hostname()}:${process.pid}`,
        host: hostname(),
        pid: process.pid,
        queues: this.o.queues,
        concurrency: this.o.concurrency,
      },
      () => this.runs.size,
      { clock: this.clock, logger: this.logger, intervalMs: this.o.heartbeatEveryMs },
    );
  }

  get state(): WorkerState {
    return this.status;
  }

  /** Jobs claimed and not yet settled (running, or waiting for their outcome to be written). */
  get inFlight(): number {
    return this.runs.size;
  }

  /**
   * Handlers that ran past their timeout and have not returned: their jobs are failed and their
   * slots given to other jobs, but their code may still be running (it ignored its signal).
   */
  get abandoned(): number {
    return this.executor.abandoned;
  }

  /** Registers the worker and starts claiming. */
  async start(): Promise<void> {
    if (this.status !== 'idle') throw new ConflictError(`worker ${this.id} is ${this.status}`);
    this.status = 'running';
    await this.presence.register();
    this.presence.start();
    this.renewer.start();
    await this.producer.start();
  }

  /**
   * Stops claiming, waits up to `timeout` (default 30 s) for in-flight jobs, then hands the rest
   * back to the queue at once with their attempt given back. Safe to call more than once.
   */
  drain(options: { timeout?: Duration } = {}): Promise<DrainResult> {
    const timeoutMs = toMilliseconds('timeout', options.timeout ?? 30_000, { min: 0 });
    this.drained ??= this.runDrain(timeoutMs);
    return this.drained;
  }

  /** A drain without patience: running jobs are handed back now and their signals fire. */
  stop(): Promise<DrainResult> {
    return this.drain({ timeout: 0 });
  }

  /**
   * Starts the worker, runs what is ready until a claim finds nothing with nothing in flight
   * (or until `timeout`, default 60 s: what is still running is then handed back), stops, and
   * answers what happened (decision 0259). For cron-triggered functions, scripts and tests.
   */
  runUntilEmpty(options: { timeout?: Duration } = {}): Promise<RunUntilEmptyResult> {
    return runUntilEmpty(this, () => this.producer.nudge(), this.clock, options);
  }

  private async runDrain(timeoutMs: number): Promise<DrainResult> {
    if (this.status === 'idle') {
      this.status = 'stopped';
      return { handedBack: 0 };
    }
    this.status = 'draining';
    await this.presence.setStatus('draining').catch(() => {});
    await this.producer.stop();
    // Jobs claimed ahead have not started: back to the queue now, not after the patience.
    const aheadHandedBack = await this.executor.handBackAhead();
    await this.executor.waitIdle(timeoutMs);
    const leftover = [...this.runs].filter((run) => run.state === 'running');
    for (const run of leftover) {
      run.abort(new AbortedError(`worker ${this.id} is draining: job ${run.ref.id} handed back`));
      run.finish();
      this.runs.delete(run);
      this.progress.forget(run.ref.id);
    }
    let handedBack: number[] = [];
    if (leftover.length > 0) {
      handedBack = await this.engine
        .jobHandBack({ workerId: this.id, jobs: leftover.map((run) => run.ref) })
        .catch((error: unknown) => {
          // Not fatal: the leases expire and maintenance rescues the jobs.
          this.events.emit('worker:error', { where: 'hand-back', error });
          return [];
        });
    }
    await this.batcher.flush();
    await this.progress.stop();
    // Not awaited: a renewal stuck on a dead connection must not hold the drain hostage, and a
    // late one is harmless (it only ever extends jobs still processing under this worker).
    void this.renewer.stop();
    await this.presence.stop();
    await this.presence.setStatus('stopped').catch(() => {});
    this.status = 'stopped';
    const total = handedBack.length + aheadHandedBack;
    this.events.emit('worker:drained', { handedBack: total });
    return { handedBack: total };
  }
}
