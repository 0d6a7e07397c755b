/**
 * `lh.worker(...)`: runs handlers for claimed jobs. It is a composition of small parts:
 * - Producer: claims batches sized to free slots (SKIP LOCKED), woken by notifications;
 * - JobRun + executor (here): runs one handler with its token and signal;
 * - Renewer: renews every in-flight lease in one statement per interval;
 * - OutcomeBatcher: completions and failures, one statement per flush window;
 * - ProgressWriter: handlers' `ctx.progress`, one statement per 250 ms at most (decision 0251);
 * - WorkerPresence: the row in the workers table.
 *
 * A job's attempt may have a timeout (the job's own, else the worker's default): at it the
 * handler's signal fires with a JobTimeoutError, the attempt fails through the retry policy at
 * once and its slot is freed; the handler, if it goes on, is abandoned: counted in `abandoned`
 * until it settles, its completion refused, its outcome ignored (decision 0241).
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
import { AbortedError, ConflictError, JobTimeoutError, LeaseLostError } from '../core/errors.js';
import type { Job, JobProgress } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import { TypedEvents } from '../runtime/events.js';
import { runUntilEmpty, type RunUntilEmptyResult } from './run-until-empty.js';
import type { WorkerEvents } from './worker-events.js';
import { silentLogger, type Logger } from '../runtime/logger.js';
import { RunContext, type ContextHost } from './job-context.js';
import { AttemptOrder } from './attempt-order.js';
import { JobRun } from './job-run.js';
import { noJobTracing, type CurrentJobTracing } from './job-tracing.js';
import type { JobSleepSignal } from './job-steps.js';
import { OutcomeBatcher } from './outcome-batcher.js';
import { Producer } from './producer.js';
import { PROGRESS_INTERVAL_MS, ProgressWriter } from './progress-writer.js';
import { Renewer } from './renewer.js';
import { OutcomeReporter } from './outcome-reporter.js';
import { describeError } from './retry-policy.js';
import { TrustDeadlines } from './trust-deadlines.js';
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
  private readonly random: () => number;
  /**
   * Every attempt in this worker, by run rather than by job id: a retry (or a woken sleeper)
   * can be claimed again by this worker while its earlier attempt's outcome is still on its way
   * back, and the two are different runs of one job.
   */
  private readonly runs = new Set<JobRun>();
  /** Events for one job in attempt order (see dispatch). */
  private readonly attempts = new AttemptOrder();
  /** Slots taken: handlers running and not timed out. */
  private active = 0;
  /** Handlers failed at their timeout that have not settled yet. */
  private abandonedHandlers = 0;
  /** Runs whose handlers are done and whose outcomes are being written (Producer's `unwritten`). */
  private unwritten = 0;
  private status: WorkerState = 'idle';
  private readonly idleWaiters = new Set<() => void>();
  private readonly producer: Producer;
  private readonly renewer: Renewer;
  private readonly batcher: OutcomeBatcher;
  private readonly progress: ProgressWriter;
  private readonly outcomes: OutcomeReporter;
  private readonly presence: WorkerPresence;
  private readonly deadlines: TrustDeadlines<JobRun>;
  private readonly contextHost: ContextHost;
  private drained: Promise<DrainResult> | undefined;

  constructor(
    private readonly engine: Engine,
    options: WorkerOptions,
    /** Tracing of handler runs, when installed (decision 0260). */
    private readonly tracing: CurrentJobTracing = noJobTracing,
  ) {
    this.o = resolveWorkerOptions(options);
    this.clock = options.clock ?? engine.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.random = options.random ?? Math.random;
    this.id = options.id ?? `worker-${randomBytes(6).toString('hex')}`;
    this.deadlines = new TrustDeadlines(this.clock, this.o.leaseTtlMs, this.o.marginMs, (run) =>
      this.reportLost(run),
    );
    this.contextHost = {
      engine,
      workerId: this.id,
      removeOnComplete: this.o.removeOnComplete,
      renewSoon: () => this.renewer.renewSoon(),
      reportProgress: (run, progress) => this.reportProgress(run, progress),
      lose: (run, error) => this.loseRun(run, error),
      slept: (run, signal) => this.sleepRun(run, signal),
    };
    const onError = (where: string) => (error: unknown) => {
      this.logger.warn({ err: error, worker: this.id }, `worker ${where} failed`);
      this.events.emit('worker:error', { where, error });
    };
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
      freeSlots: () => this.o.concurrency - this.active,
      unwritten: () => this.unwritten,
      dispatch: (job, sentAt) => this.dispatch(job, sentAt),
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
      onLost: (run) => this.reportLost(run),
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
    this.outcomes = new OutcomeReporter({
      events: this.events,
      attempts: this.attempts,
      progress: this.progress,
      batcher: this.batcher,
      runs: this.runs,
      clock: this.clock,
      retryBackoff: this.o.retryBackoff,
      random: this.random,
      reportLost: (run) => this.reportLost(run),
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
    return this.abandonedHandlers;
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
    await this.waitIdle(timeoutMs);
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
    this.events.emit('worker:drained', { handedBack: handedBack.length });
    return { handedBack: handedBack.length };
  }

  private dispatch(job: Job, claimSentAt: number): void {
    const run = new JobRun(job, this.deadlines, this.clock.monotonic(), claimSentAt);
    this.runs.add(run);
    this.active++;
    // The job's own timeout wins over the worker's default.
    const timeoutMs = job.timeoutMs ?? this.o.timeoutMs;
    if (timeoutMs !== null)
      run.armTimeout(this.clock, timeoutMs, () => this.timeOut(run, timeoutMs));
    // The earlier attempt's outcome is stored (this claim saw it) but may not be reported yet:
    // its job:failed comes before this attempt's job:started, as it happened.
    void (this.attempts.mustWait(job.id) ? this.executeInTurn(run) : this.execute(run));
  }

  /** Runs `run` once its job's earlier attempt has been reported (rare: see dispatch). */
  private async executeInTurn(run: JobRun): Promise<void> {
    await this.attempts.turn(run.ref.id);
    if (run.state === 'running') return this.execute(run);
    // Timed out or handed back by a drain while it waited: its handler never ran.
    if (run.timedOut) this.abandonedHandlers--;
    else this.freeSlot();
  }

  /**
   * Runs the handler. Callbacks rather than an async function: this is every job's path, and
   * each promise a job makes costs again under a promise hook (AsyncLocalStorage on Node 20,
   * decision 0271). The handler's answer is taken in a later microtask, as an `await` took it,
   * even when the handler returned or threw at once: never inside the claim that dispatched it.
   */
  private execute(run: JobRun): void {
    const { job } = run;
    this.events.emit('job:started', { job });
    let running: Promise<unknown>;
    try {
      const context = new RunContext(run, this.contextHost);
      const tracing = this.tracing();
      running = tracing
        ? tracing.handle(job, context, () => this.callHandler(job, context))
        : this.callHandler(job, context);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (result: unknown) => this.handlerReturned(run, result),
      (error: unknown) => this.handlerEnded(run, false, error),
    );
  }

  /**
   * The handler's answer as a promise: a JavaScript handler may answer a plain value (the types
   * ask for a promise), and the tracing seam and what follows take a promise.
   */
  private callHandler(job: Job, context: RunContext): Promise<unknown> {
    const answer: unknown = this.o.handler(job, context);
    return answer instanceof Promise ? answer : Promise.resolve(answer);
  }

  private handlerReturned(run: JobRun, result: unknown): void {
    try {
      // What the engine would refuse to store fails the attempt here, with a readable error.
      if (result !== undefined) JSON.stringify(result);
    } catch (error) {
      return this.handlerEnded(run, false, error);
    }
    this.handlerEnded(run, true, result);
  }

  /** The handler is done: `value` is its result when `ok`, else what it threw. */
  private handlerEnded(run: JobRun, ok: boolean, value: unknown): void {
    if (run.timedOut) {
      // Failed at its timeout, its slot freed then: whatever the handler says now is too late.
      this.abandonedHandlers--;
      return;
    }
    // Asleep (ctx.sleep): the job is pending again and the slot was freed with the sleep.
    if (run.slept) return;
    this.freeSlot();
    if (run.state === 'done') return; // handed back by a drain while the handler ran
    run.state = 'flushing';
    this.unwritten++;
    this.outcomes.settle(run, ok, value, () => this.outcomeWritten());
  }

  private outcomeWritten(): void {
    this.unwritten--;
    this.producer.slotFreed();
  }

  /**
   * The attempt ran past its timeout. Its signal fires, and its failure goes out now through the
   * retry policy, like a thrown error, without waiting for the handler: a handler that ignores
   * its signal must not hold the job, nor leave it to wait out its lease. The slot is freed now
   * too (a hung handler must not starve the worker); the job's fencing stays behind: the
   * handler's `complete` and `renew` throw the timeout from now on, its outcome is ignored, and
   * its token is older than the next attempt's.
   */
  private timeOut(run: JobRun, timeoutMs: number): void {
    if (run.state !== 'running') return; // settled first, or handed back by a drain
    const error = new JobTimeoutError(run.ref.id, timeoutMs);
    run.timeOut(error);
    this.abandonedHandlers++;
    this.freeSlot();
    this.logger.warn({ job: run.ref.id, worker: this.id, timeoutMs }, error.message);
    this.outcomes.settle(run, false, error);
  }

  private freeSlot(): void {
    this.active--;
    this.producer.slotFreed();
    this.notifyIdle();
  }

  private reportProgress(run: JobRun, progress: JobProgress): void {
    // After the handler returned (a stray callback of its) or completed in its transaction, the
    // outcome says the rest.
    if (run.state !== 'running' || run.completedInTransaction) return;
    this.progress.report({
      ref: run.ref,
      progress,
      onRefused: () => {
        // Refused because its outcome went out meanwhile, or already known lost: nothing new.
        if (run.state !== 'running' || run.completedInTransaction || run.lost) return;
        run.abort(
          new LeaseLostError(
            `job:${run.ref.id}`,
            'a progress write did not find the job: it expired, was cancelled or was taken over',
          ),
        );
        this.reportLost(run);
      },
    });
  }

  /** A step or sleep the database refused: the job is no longer ours, as a refused renewal says. */
  private loseRun(run: JobRun, error: LeaseLostError): void {
    // Its outcome is already on its way (or it timed out, or slept): nothing new to tell.
    if (run.state !== 'running' || run.lost) return;
    run.abort(error);
    this.reportLost(run);
  }

  /**
   * The handler's sleep is recorded: the job is pending again, so the attempt ends here. Its
   * signal fires (with the sleep), its slot is freed at once and nothing is written for it;
   * whatever the handler does next is ignored (execute returns when it settles).
   */
  private sleepRun(run: JobRun, signal: JobSleepSignal): void {
    // Timed out or handed back while the sleep was being written: their path settles the run.
    if (run.state !== 'running') return;
    run.slept = true;
    run.abort(signal);
    run.finish();
    this.runs.delete(run);
    this.progress.forget(run.ref.id);
    this.freeSlot();
    this.events.emit('job:slept', { job: run.job, step: signal.step, until: signal.until });
  }

  private reportLost(run: JobRun): void {
    const reason = run.lostReason?.message ?? 'lease lost';
    this.events.emit('job:lost', { job: run.job, reason });
    this.logger.warn({ job: run.ref.id, worker: this.id }, describeError(run.lostReason));
  }

  private waitIdle(timeoutMs: number): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        this.idleWaiters.delete(check);
        timer.cancel();
        resolve();
      };
      const check = (): void => {
        if (this.active === 0) finish();
      };
      this.idleWaiters.add(check);
      const timer = this.clock.setTimer(timeoutMs, finish);
    });
  }

  private notifyIdle(): void {
    if (this.idleWaiters.size === 0) return; // the common case, once per job: no copy
    for (const waiter of [...this.idleWaiters]) waiter();
  }
}
