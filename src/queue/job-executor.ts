/**
 * The worker's slots: each claimed job's handler is run here with its token and signal, and its
 * attempt ends here, when the handler answers, at the attempt's timeout, at a `ctx.sleep`, or
 * when the job is lost. The executor counts the slots taken (the producer claims only what can
 * start) and tells a drain when none is.
 *
 * A job's attempt may have a timeout (the job's own, else the worker's default): at it the
 * handler's signal fires with a JobTimeoutError, the attempt fails through the retry policy at
 * once and its slot is freed; the handler, if it goes on, is abandoned: counted in `abandoned`
 * until it settles, its completion refused, its outcome ignored (decision 0241).
 *
 * Every job takes the path dispatch → handler → settle, so it runs in callbacks, not async
 * steps: each promise a job makes costs again under a promise hook (decision 0271).
 */
import type { Clock } from '../core/clock.js';
import { AbortedError, JobTimeoutError, LeaseLostError } from '../core/errors.js';
import type { Job, JobProgress } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import type { TypedEvents } from '../runtime/events.js';
import type { Logger } from '../runtime/logger.js';
import { AttemptOrder } from './attempt-order.js';
import { AHEAD_AT_LEAST, ClaimAhead } from './claim-ahead.js';
import { RunContext, type ContextHost } from './job-context.js';
import { JobRun } from './job-run.js';
import type { JobSleepSignal } from './job-steps.js';
import type { CurrentJobTracing } from './job-tracing.js';
import type { OutcomeBatcher } from './outcome-batcher.js';
import { OutcomeReporter } from './outcome-reporter.js';
import type { Producer } from './producer.js';
import type { ProgressWriter } from './progress-writer.js';
import type { Renewer } from './renewer.js';
import { describeError } from './retry-policy.js';
import { TrustDeadlines } from './trust-deadlines.js';
import type { WorkerEvents } from './worker-events.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/** The worker's parts a JobExecutor works with. */
export interface JobExecutorParts {
  readonly engine: Engine;
  readonly workerId: string;
  readonly options: ResolvedWorkerOptions;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly random: () => number;
  /** Tracing of handler runs, when installed (decision 0260). */
  readonly tracing: CurrentJobTracing;
  readonly events: TypedEvents<WorkerEvents>;
  /**
   * The worker's runs in flight: added here at dispatch, removed once their outcome is told (or
   * a drain hands them back).
   */
  readonly runs: Set<JobRun>;
  /** Told each time a slot is freed or an outcome written. */
  readonly producer: Producer;
  readonly renewer: Renewer;
  readonly progress: ProgressWriter;
  readonly batcher: OutcomeBatcher;
}

export class JobExecutor {
  private readonly o: ResolvedWorkerOptions;
  private readonly workerId: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly tracing: CurrentJobTracing;
  private readonly events: TypedEvents<WorkerEvents>;
  private readonly runs: Set<JobRun>;
  private readonly producer: Producer;
  private readonly progress: ProgressWriter;
  /** Events for one job in attempt order (see dispatch). */
  private readonly attempts = new AttemptOrder();
  private readonly deadlines: TrustDeadlines<JobRun>;
  private readonly outcomes: OutcomeReporter;
  private readonly contextHost: ContextHost;
  /** Slots taken: handlers running and not timed out. */
  private active = 0;
  /** Handlers failed at their timeout that have not settled yet. */
  private abandonedHandlers = 0;
  /** Runs whose handlers are done and whose outcomes are being written (Producer's `unwritten`). */
  private unwrittenOutcomes = 0;
  private readonly idleWaiters = new Set<() => void>();
  /** Jobs claimed ahead of a free slot, waiting for one (decision 0277). */
  private readonly ahead: ClaimAhead;
  private readonly engine: Engine;

  constructor(parts: JobExecutorParts) {
    this.engine = parts.engine;
    this.o = parts.options;
    this.workerId = parts.workerId;
    this.clock = parts.clock;
    this.logger = parts.logger;
    this.tracing = parts.tracing;
    this.events = parts.events;
    this.runs = parts.runs;
    this.producer = parts.producer;
    this.progress = parts.progress;
    this.deadlines = new TrustDeadlines(this.clock, this.o.leaseTtlMs, this.o.marginMs, (run) =>
      this.reportLost(run),
    );
    const { renewer } = parts;
    this.contextHost = {
      engine: parts.engine,
      workerId: this.workerId,
      removeOnComplete: this.o.removeOnComplete,
      renewSoon: () => renewer.renewSoon(),
      reportProgress: (run, progress) => this.reportProgress(run, progress),
      lose: (run, error) => this.loseRun(run, error),
      slept: (run, signal) => this.sleepRun(run, signal),
    };
    this.outcomes = new OutcomeReporter({
      events: this.events,
      attempts: this.attempts,
      progress: this.progress,
      batcher: parts.batcher,
      runs: this.runs,
      clock: this.clock,
      retryBackoff: this.o.retryBackoff,
      random: parts.random,
      reportLost: (run) => this.reportLost(run),
    });
    this.ahead = new ClaimAhead({
      enabled: this.o.claimAhead,
      most: Math.max(Math.min(this.o.concurrency, this.o.maxClaimBatch), AHEAD_AT_LEAST),
      clock: this.clock,
      stalled: (runs) => void this.handBack(runs, 'waited too long for a slot'),
    });
  }

  /** Slots not taken by a running handler (Producer's `freeSlots`). */
  get freeSlots(): number {
    return this.o.concurrency - this.active;
  }

  /**
   * How many more jobs may be claimed ahead of the slots now (Producer's `aheadRoom`); negative
   * when more are held ahead than the handlers' durations now allow.
   */
  get aheadRoom(): number {
    return this.ahead.room;
  }

  /** A claim was answered `ms` after it was sent: what claiming ahead weighs handlers against. */
  claimTook(ms: number): void {
    this.ahead.claimTook(ms);
  }

  /** Runs whose handlers are done and whose outcomes are not written yet. */
  get unwritten(): number {
    return this.unwrittenOutcomes;
  }

  /** Handlers that ran past their timeout and have not returned (Worker's `abandoned`). */
  get abandoned(): number {
    return this.abandonedHandlers;
  }

  /**
   * Takes a slot for a job its claim (sent at `claimSentAt`) took, and runs its handler; a job
   * claimed ahead, with every slot taken, waits for one.
   */
  dispatch(job: Job, claimSentAt: number): void {
    const run = new JobRun(job, this.deadlines, this.clock.monotonic(), claimSentAt);
    this.runs.add(run);
    if (this.active < this.o.concurrency) this.start(run);
    else this.ahead.push(run);
  }

  /**
   * Gives back every job claimed ahead and not started, and claims none ahead any more (a
   * drain): answers how many were given back.
   */
  handBackAhead(): Promise<number> {
    return this.handBack(this.ahead.close(), 'the worker is draining');
  }

  private start(run: JobRun): void {
    this.active++;
    run.startedAt = this.clock.monotonic();
    // The job's own timeout wins over the worker's default.
    const timeoutMs = run.job.timeoutMs ?? this.o.timeoutMs;
    if (timeoutMs !== null)
      run.armTimeout(this.clock, timeoutMs, () => this.timeOut(run, timeoutMs));
    // The earlier attempt's outcome is stored (this claim saw it) but may not be reported yet:
    // its job:failed comes before this attempt's job:started, as it happened.
    void (this.attempts.mustWait(run.ref.id) ? this.executeInTurn(run) : this.execute(run));
  }

  /** A slot is free: the oldest job claimed ahead takes it, unless it was lost meanwhile. */
  private startNextAhead(): void {
    for (let run = this.ahead.shift(); run; run = this.ahead.shift()) {
      if (run.state === 'running' && !run.lost) return this.start(run);
      // Lost while it waited (job:lost was told): its handler never runs.
      run.finish();
      this.runs.delete(run);
    }
  }

  /** Hands jobs that never started back to the queue, their attempt given back. */
  private async handBack(runs: JobRun[], why: string): Promise<number> {
    if (runs.length === 0) return 0;
    for (const run of runs) {
      run.abort(new AbortedError(`job ${run.ref.id} handed back: ${why}`));
      run.finish();
      this.runs.delete(run);
    }
    try {
      const handed = await this.engine.jobHandBack({
        workerId: this.workerId,
        jobs: runs.map((run) => run.ref),
      });
      return handed.length;
    } catch (error) {
      // Not fatal: the leases expire and maintenance rescues the jobs.
      this.events.emit('worker:error', { where: 'hand-back', error });
      return 0;
    } finally {
      this.producer.slotFreed();
    }
  }

  /** The run's lease is lost (trust deadline, renewal, refused write): say so. */
  reportLost(run: JobRun): void {
    const reason = run.lostReason?.message ?? 'lease lost';
    this.events.emit('job:lost', { job: run.job, reason });
    this.logger.warn({ job: run.ref.id, worker: this.workerId }, describeError(run.lostReason));
  }

  /** Resolves once no slot is taken, or after `timeoutMs`, whichever comes first. */
  waitIdle(timeoutMs: number): Promise<void> {
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
    this.ahead.handlerTook(this.clock.monotonic() - run.startedAt);
    if (run.state === 'done') return this.freeSlot(); // handed back by a drain while it ran
    run.state = 'flushing';
    this.unwrittenOutcomes++;
    this.outcomes.settle(run, ok, value, () => this.outcomeWritten());
    // Freed after the settle: a job claimed ahead starts here, after this one's outcome is on
    // its way.
    this.freeSlot();
  }

  private outcomeWritten(): void {
    this.unwrittenOutcomes--;
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
    this.logger.warn({ job: run.ref.id, worker: this.workerId, timeoutMs }, error.message);
    this.outcomes.settle(run, false, error);
  }

  private freeSlot(): void {
    this.active--;
    if (this.ahead.length > 0) this.startNextAhead();
    this.producer.slotFreed();
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.idleWaiters.size === 0) return; // the common case, once per job: no copy
    for (const waiter of [...this.idleWaiters]) waiter();
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
}
