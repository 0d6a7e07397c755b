import { HeldTerms } from './core/held-terms.js';
import { ConflictError, InvalidArgumentError } from './core/errors.js';
import type { Clock } from './core/clock.js';
import type { Engine, MigrationReport } from './engine/engine.js';
import { EngineMetrics } from './engine/engine-metrics.js';
import { instrumentEngine, type InstrumentedEngine } from './engine/instrumented-engine.js';
import { MemoryEngine } from './engine/memory/memory-engine.js';
import { PostgresEngine } from './engine/postgres/postgres-engine.js';
import { ControlManager } from './controls/control-manager.js';
import { LIMITS, requireSafeInteger } from './core/validate.js';
import { LeaseManager } from './leases/lease-manager.js';
import { Fence } from './locks/fence.js';
import { LockManager } from './locks/lock-manager.js';
import { Election } from './locks/election.js';
import type { ElectionOptions } from './locks/election-options.js';
import { Schedule } from './schedules/schedule.js';
import type { ScheduleOptions } from './schedules/schedule-options.js';
import type { ScheduledFunction } from './schedules/slot-run.js';
import {
  checkMetricsOptions,
  LeaseholdMetrics,
  type MetricsOptions,
} from './metrics/leasehold-metrics.js';
import { JobManager } from './queue/job-manager.js';
import { JobWaiters } from './queue/job-waiters.js';
import { Maintainer, type MaintainerOptions } from './queue/maintenance/maintainer.js';
import { Queue, singleEnqueues } from './queue/queue.js';
import { Worker } from './queue/worker.js';
import type { WorkerOptions } from './queue/worker-options.js';
import type { JobTypes, TypedEnqueue } from './queue/typed-jobs.js';
import { scheduledEnqueue } from './queue/scheduled-enqueue.js';
import type { JobTracing } from './queue/job-tracing.js';
import type {
  ConnectOptions,
  LeaseholdEvents,
  LeaseholdInstrumentation,
  MemoryOptions,
  ScheduleSummary,
} from './leasehold-options.js';

/**
 * Leasehold as its own applications (the HTTP service, the CLI, the demo processes) see it:
 * every manager, but not the engine, so they pass through the same validation and coalescing
 * as any other caller of the library (decision 0231).
 */
export type LeaseholdFacade = Omit<Leasehold, 'engine'>;

/**
 * The front door. One Leasehold per process and database is the intended use: it owns the
 * engine (and its pool, unless you passed one) and every manager built on it.
 *
 * ```ts
 * const lh = await Leasehold.connect({ connectionString: process.env.DATABASE_URL, migrate: true });
 * await lh.leases.withLease('nightly-report', { holder: 'web-1', ttl: '30s' }, async ({ token, signal }) => {
 *   await buildReport({ token, signal });
 * });
 * await lh.close();
 * ```
 */
export class Leasehold {
  readonly leases: LeaseManager;
  /** Advisory, session and lease locks: `lh.locks.lease('nightly', { ttl: '30s' })`. */
  readonly locks: LockManager;
  /** Jobs by id across queues: reads, administration, and the claim protocol for remote consumers. */
  readonly jobs: JobManager;
  /** Named settings every instance agrees on: `lh.controls.get('generator')`. */
  readonly controls: ControlManager;
  // --- elections and schedules ---
  private readonly electionServices = new Set<Election | Schedule>();
  // --- queue and workers ---
  private readonly queueServices = new Set<{ stop(): Promise<unknown> }>();
  private enqueues: ReturnType<typeof singleEnqueues> | undefined;
  /** Every waitFor of this instance, sharing one `job-finished` subscription. */
  private readonly waiters: JobWaiters;
  /** Held leases, lease-lock terms and permits, given up by close() (decision 0285). */
  private readonly heldTerms = new HeldTerms();
  // --- instrumentation ---
  /**
   * The engine every manager uses: the one given, instrumented (src/engine/instrumented-engine.ts).
   * It reads as that engine (`instanceof`, its own fields) and adds nothing to a call until
   * someone listens through `on('engine')` or `engineMetrics()`.
   */
  readonly engine: Engine;
  private readonly instrumented: InstrumentedEngine;
  private callMetrics: EngineMetrics | undefined;
  /** Prometheus metrics by registry (undefined: the one made for `lh.metrics()` with none). */
  private readonly prometheus = new Map<object | undefined, LeaseholdMetrics>();
  /** Told of every worker and election created (the Prometheus metrics watch their events). */
  private readonly serviceWatchers = new Set<(service: Worker | Election) => void>();
  /** The hooks `instrument()` installed (decision 0260); read at each enqueue and handler run. */
  private installed: LeaseholdInstrumentation | undefined;
  private readonly currentJobTracing = (): JobTracing | undefined => this.installed?.jobs;

  private constructor(engine: Engine) {
    this.engine = this.instrumented = instrumentEngine(engine);
    this.leases = new LeaseManager(this.engine, this.engine.clock, this.heldTerms);
    this.locks = new LockManager(this.engine, this.engine.clock, this.heldTerms);
    this.waiters = new JobWaiters(this.engine);
    this.jobs = new JobManager(this.engine, this.waiters);
    this.controls = new ControlManager(this.engine);
  }

  /** The clock that schedules timers (and, for the memory engine, decides validity). */
  get clock(): Clock {
    return this.engine.clock;
  }

  /** Now, by the clock that decides validity: the database's for PostgreSQL. */
  now(): Promise<Date> {
    return this.engine.now();
  }

  /** Schedules declared anywhere on this database, each as its newest claimed slot describes it. */
  async listSchedules(options: { limit?: number } = {}): Promise<ScheduleSummary[]> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'must be an object { limit? }');
    const limit = requireSafeInteger('limit', options.limit ?? 100, 1);
    if (limit > LIMITS.listMaxLimit)
      throw new InvalidArgumentError('limit', `must be at most ${LIMITS.listMaxLimit}`);
    return this.engine.scheduleList({ limit });
  }

  static async connect(options: ConnectOptions): Promise<Leasehold> {
    const engine = new PostgresEngine(options);
    const lh = new Leasehold(engine);
    if (options.migrate) await lh.migrate();
    return lh;
  }

  static memory(options: MemoryOptions = {}): Leasehold {
    return new Leasehold(new MemoryEngine(options));
  }

  /** Builds on an engine you constructed yourself (e.g. wrapped for instrumentation). */
  static fromEngine(engine: Engine): Leasehold {
    return new Leasehold(engine);
  }

  /** The producer's side of a queue: enqueue and enqueueMany. */
  queue(name: string): Queue;
  /**
   * A queue typed by job type (decision 0247): `lh.queue<{ 'send-email': Email }>('emails')`
   * accepts only `enqueue(email, { type: 'send-email' })`, with `Email` checked at compile time.
   */
  queue<M extends JobTypes>(name: string): Omit<Queue, 'enqueue' | 'enqueueMany'> & TypedEnqueue<M>;
  queue(name: string): Queue {
    return new Queue(
      this.engine,
      name,
      (this.enqueues ??= singleEnqueues(this.engine)),
      this.waiters,
      this.currentJobTracing,
    );
  }

  /**
   * A worker for one or more queues; call `start()`, and `drain()` before exit. With
   * `handlers`, `lh.worker<M>({ queues, handlers })` types each handler's payload by job type.
   */
  worker<M extends JobTypes = JobTypes>(options: WorkerOptions<M>): Worker {
    const worker = new Worker(this.engine, options as WorkerOptions, this.currentJobTracing);
    this.queueServices.add(worker);
    for (const watch of this.serviceWatchers) watch(worker);
    return worker;
  }

  /**
   * Queue housekeeping (rescue expired leases, mark silent workers dead, prune old jobs). Run
   * one in every instance if you like: each cycle runs on only one of them. Call `start()`.
   */
  maintainer(options: MaintainerOptions = {}): Maintainer {
    const maintainer = new Maintainer(this.engine, options);
    this.queueServices.add(maintainer);
    return maintainer;
  }

  /**
   * A downstream write guard for one scope: `check(tx, token)` inside your transaction records
   * the newest token seen and throws `stale_token` for an older one (see docs/locks-and-elections.md).
   */
  fence(scope: string): Fence {
    return new Fence(this.engine, scope);
  }

  /**
   * Leader election among the instances that use the same `name`. Call `start()`; `close()` (or
   * `lh.close()`) steps down and hands over at once. See docs/locks-and-elections.md.
   *
   * ```ts
   * const election = lh.elect('importer', {
   *   ttl: '15s',
   *   onElected: (token, signal) => void runImporter({ token, signal }),
   *   onRevoked: () => log.info('no longer leading'),
   * });
   * await election.start();
   * ```
   */
  elect(name: string, options: ElectionOptions = {}): Election {
    const election = new Election(this.engine, name, options);
    this.track(election);
    for (const watch of this.serviceWatchers) watch(election);
    return election;
  }

  /**
   * Runs `fn` once per slot (`every: '5m'` or `cron: '0 3 * * *'`) across every instance that
   * declares the same schedule: each slot is claimed in the database, so it runs once whatever
   * the clock skew or the task's length. Already started; `close()` (or `lh.close()`) stops it.
   */
  schedule(name: string, options: ScheduleOptions, fn?: ScheduledFunction): Schedule {
    // Options that are not an object are refused by the Schedule, with the other bad input.
    const enqueue = typeof options === 'object' && options !== null ? options.enqueue : undefined;
    if ((fn === undefined) === (enqueue === undefined))
      throw new InvalidArgumentError(
        'fn',
        'give either a function to run each slot or options.enqueue (a job each slot)',
      );
    const task = fn ?? scheduledEnqueue(name, enqueue, (queue) => this.queue(queue));
    const schedule = new Schedule(this.engine, name, options, task);
    this.track(schedule);
    // start() reports its own failures through the schedule's onError; nothing to add here.
    schedule.start().catch(() => {});
    return schedule;
  }

  /** Remembers a service for close(); forgets the ones closed meanwhile. */
  private track(service: Election | Schedule): void {
    for (const s of this.electionServices)
      if (s.state === 'closed') this.electionServices.delete(s);
    this.electionServices.add(service);
  }

  /**
   * Listens to `event` from now on; returns the function that stops listening. `engine`: every
   * engine call (operation, duration, outcome ok/error, error code), for metrics and tracing.
   *
   * ```ts
   * lh.on('engine', (call) => histogram.observe({ op: call.operation }, call.durationMs / 1000));
   * ```
   */
  on<K extends keyof LeaseholdEvents>(
    event: K,
    listener: (payload: LeaseholdEvents[K]) => void,
  ): () => void {
    if (event !== 'engine') throw new InvalidArgumentError('event', 'must be "engine"');
    return this.instrumented.onCall(listener);
  }

  /**
   * Calls, errors by code and a duration histogram per engine operation, counted in process
   * from the first call of this method on (it subscribes once, for the life of this Leasehold).
   */
  engineMetrics(): EngineMetrics {
    if (!this.callMetrics) {
      this.callMetrics = new EngineMetrics();
      this.instrumented.onCall(this.callMetrics.record);
    }
    return this.callMetrics;
  }

  /**
   * Prometheus metrics of everything this Leasehold does (decision 0258), on `registry` (a
   * prom-client Registry) or, without one, on a registry of their own (`.registry`). One set per
   * registry: asking again for the same registry answers the same metrics until `close()`.
   *
   * ```ts
   * import { Registry } from 'prom-client';
   * const registry = new Registry();
   * lh.metrics({ registry });
   * http.createServer(async (_req, res) => res.end(await registry.metrics()));
   * ```
   */
  metrics(options: MetricsOptions = {}): LeaseholdMetrics {
    checkMetricsOptions(options);
    const { registry } = options;
    const known = this.prometheus.get(registry);
    if (known && !known.closed) return known;
    const metrics = new LeaseholdMetrics(
      {
        onEngineCall: (listener) => this.instrumented.onCall(listener),
        onService: (listener) => this.watchServices(listener),
        workers: () => [...this.queueServices].filter((s) => s instanceof Worker),
        countJobs: () => this.jobs.counts(),
        countActiveLeases: () => this.leases.countActive(),
      },
      options,
    );
    this.prometheus.set(registry, metrics);
    return metrics;
  }

  /**
   * Installs tracing hooks (decision 0260); returns the function that removes them. One set at
   * a time: a second is a `ConflictError` until the first is removed. You rarely call this
   * yourself: `instrument(lh)` of `leasehold/opentelemetry` does.
   */
  instrument(instrumentation: LeaseholdInstrumentation): () => void {
    if (typeof instrumentation !== 'object' || instrumentation === null)
      throw new InvalidArgumentError(
        'instrumentation',
        'must be an object { jobs?, requests?, service? }',
      );
    if (this.installed) throw new ConflictError('this Leasehold is already instrumented');
    this.installed = instrumentation;
    const service = instrumentation.service?.bind(instrumentation);
    const unwatch = service ? this.watchServices(service) : () => {};
    return () => {
      if (this.installed !== instrumentation) return;
      this.installed = undefined;
      unwatch();
    };
  }

  /** The hooks `instrument()` installed, or undefined. */
  get instrumentation(): LeaseholdInstrumentation | undefined {
    return this.installed;
  }

  /** Tells `listener` of every worker and election, those made so far and later ones. */
  private watchServices(listener: (service: Worker | Election) => void): () => void {
    for (const s of this.queueServices) if (s instanceof Worker) listener(s);
    for (const s of this.electionServices) if (s instanceof Election) listener(s);
    this.serviceWatchers.add(listener);
    return () => this.serviceWatchers.delete(listener);
  }

  /** Creates or upgrades leasehold's tables; safe when many instances start at once. */
  migrate(): Promise<MigrationReport> {
    return this.engine.migrate();
  }

  /**
   * Stops workers (a hard stop: in-flight jobs are handed back) and maintainers, gives up the
   * leases, lease locks and permits this instance still holds (each lost, its signal fired with a
   * LeaseLostError, then released for the next holder), then closes the engine.
   */
  async close(): Promise<void> {
    // Schedules before elections (a schedule may run under one made by elect()); both hand over at once.
    const services = [...this.electionServices];
    this.electionServices.clear();
    for (const kind of [Schedule, Election]) {
      const closing = services.filter((s) => s instanceof kind).map((s) => s.close());
      await Promise.all(closing.map((p) => p.catch(() => {})));
    }
    await Promise.all([...this.queueServices].map((s) => s.stop().catch(() => {})));
    this.queueServices.clear();
    // Nothing could renew them once the engine is closed: given up, others need not wait.
    await this.heldTerms.relinquishAll('lh.close() gave it up before its holder released it');
    return this.engine.close();
  }
}
