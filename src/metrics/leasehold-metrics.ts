/**
 * Prometheus metrics of the library (decision 0258): what any process using leasehold does,
 * on a prom-client registry, not only `leasehold serve`. Everything is observed from what the
 * library already tells: the instrumented engine's call events (every engine call of this
 * Leasehold, whoever made it: claims, lease acquires, batched writes), the events of the
 * workers and elections this Leasehold created, and two gauges of database state read at
 * scrape time. Observing is counters and histograms only: no database read per job.
 *
 * Names follow Prometheus conventions: base units in the name (`_seconds`), `_total` for
 * counters, every name under `leasehold_`.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { InvalidArgumentError } from '../core/errors.js';
import { claimedByQueue, engineBatchSize } from '../engine/engine-batch-size.js';
import type { EngineCallEvent } from '../engine/instrumented-engine.js';
import type { JobCount } from '../engine/job-admin.js';
import type { Election } from '../locks/election.js';
import type { Worker, WorkerState } from '../queue/worker.js';

/** What the metrics read from a Leasehold (kept narrow: this module never imports leasehold.ts). */
export interface MetricsSource {
  /** Subscribes to every engine call; returns the function that stops it. */
  onEngineCall(listener: (call: EngineCallEvent) => void): () => void;
  /** Tells `listener` of every worker and election, those created so far and later ones. */
  onService(listener: (service: Worker | Election) => void): () => void;
  /** The workers this Leasehold created and has not closed. */
  workers(): Iterable<Worker>;
  countJobs(): Promise<readonly JobCount[]>;
  countActiveLeases(): Promise<number>;
}

export interface MetricsOptions {
  /** The registry to register on (default: a new one, `metrics.registry`). */
  registry?: Registry;
}

/** Refuses options that are not `{ registry? }` with a prom-client Registry: `invalid_argument`. */
export function checkMetricsOptions(options: unknown): asserts options is MetricsOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object { registry? }');
  const { registry } = options as { registry?: unknown };
  if (
    registry !== undefined &&
    (typeof registry !== 'object' ||
      registry === null ||
      typeof (registry as { registerMetric?: unknown }).registerMetric !== 'function')
  )
    throw new InvalidArgumentError('registry', 'must be a prom-client Registry');
}

/** How a job's attempt ended, as the duration histogram and the counters label it. */
export type JobOutcome = 'completed' | 'retried' | 'dead';

const WORKER_STATES: readonly WorkerState[] = ['idle', 'running', 'draining', 'stopped'];

export class LeaseholdMetrics {
  readonly registry: Registry;
  readonly leaseAcquisitions: Counter<'result'>;
  readonly claimLatency: Histogram<'queue'>;
  readonly jobsClaimed: Counter<'queue'>;
  readonly jobDuration: Histogram<'queue' | 'outcome'>;
  readonly jobRetries: Counter<'queue'>;
  readonly jobsDead: Counter<'queue'>;
  readonly jobsLost: Counter<'queue'>;
  readonly electionTerms: Counter<'election'>;
  readonly electionRevocations: Counter<'election'>;
  readonly batchSize: Histogram<'operation'>;
  readonly engineCalls: Histogram<'operation' | 'outcome'>;
  private readonly leading = new Map<string, number>();
  private readonly stops: (() => void)[] = [];
  private readonly names: string[] = [];
  private isClosed = false;

  constructor(
    private readonly source: MetricsSource,
    options: MetricsOptions = {},
  ) {
    const registry = (this.registry = options.registry ?? new Registry());
    const registers = [registry];
    const before = new Set(registry.getMetricsAsArray().map((m) => m.name));
    this.leaseAcquisitions = new Counter({
      name: 'leasehold_lease_acquisitions_total',
      help:
        'Lease acquires made through this process, by result: acquired (a new term), extended ' +
        "(the caller's own live term), held (another holder's).",
      labelNames: ['result'],
      registers,
    });
    this.claimLatency = new Histogram({
      name: 'leasehold_claim_latency_seconds',
      help: 'Time a successful claim spends in the engine, by queue (every claim of this process).',
      labelNames: ['queue'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers,
    });
    this.jobsClaimed = new Counter({
      name: 'leasehold_jobs_claimed_total',
      help: 'Jobs claimed by this process, by queue.',
      labelNames: ['queue'],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'leasehold_job_duration_seconds',
      help: 'Time from claim to outcome of an attempt, by queue and outcome (completed, retried, dead).',
      labelNames: ['queue', 'outcome'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers,
    });
    this.jobRetries = new Counter({
      name: 'leasehold_job_retries_total',
      help: 'Failed attempts that were scheduled for a retry, by queue.',
      labelNames: ['queue'],
      registers,
    });
    this.jobsDead = new Counter({
      name: 'leasehold_jobs_dead_total',
      help: 'Jobs that failed for good (dead-lettered), by queue.',
      labelNames: ['queue'],
      registers,
    });
    this.jobsLost = new Counter({
      name: 'leasehold_jobs_lost_total',
      help: 'Jobs a worker stopped trusting its lease on (expired, cancelled, taken over), by queue.',
      labelNames: ['queue'],
      registers,
    });
    this.electionTerms = new Counter({
      name: 'leasehold_election_terms_total',
      help: 'Terms this process won, by election.',
      labelNames: ['election'],
      registers,
    });
    this.electionRevocations = new Counter({
      name: 'leasehold_election_revocations_total',
      help: 'Terms this process lost or gave up, by election.',
      labelNames: ['election'],
      registers,
    });
    this.batchSize = new Histogram({
      name: 'leasehold_engine_batch_size',
      help: 'Items per batched engine call (coalesced enqueues, lease calls, completions, claims), by operation.',
      labelNames: ['operation'],
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
      registers,
    });
    this.engineCalls = new Histogram({
      name: 'leasehold_engine_call_duration_seconds',
      help: 'Engine calls made by this process, by operation and outcome.',
      labelNames: ['operation', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    const leading = this.leading;
    new Gauge({
      name: 'leasehold_election_leader',
      help: '1 while this process leads the election, 0 otherwise.',
      labelNames: ['election'],
      registers,
      collect() {
        for (const [election, value] of leading) this.set({ election }, value);
      },
    });
    new Gauge({
      name: 'leasehold_workers',
      help: 'Workers of this process by state.',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = new Map(WORKER_STATES.map((s) => [s, 0]));
        for (const worker of source.workers())
          counts.set(worker.state, (counts.get(worker.state) ?? 0) + 1);
        for (const [state, count] of counts) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'leasehold_leases_active',
      help: 'Leases held right now (fleet-wide, read from the database at scrape time).',
      registers,
      async collect() {
        this.set(await source.countActiveLeases());
      },
    });
    new Gauge({
      name: 'leasehold_jobs',
      help: 'Jobs by queue and status (fleet-wide, read from the database at scrape time).',
      labelNames: ['queue', 'status'],
      registers,
      async collect() {
        this.reset();
        for (const row of await source.countJobs().catch(() => []))
          this.set({ queue: row.queue, status: row.status }, row.count);
      },
    });
    for (const metric of registry.getMetricsAsArray())
      if (!before.has(metric.name)) this.names.push(metric.name);
    this.stops.push(source.onEngineCall((call) => this.observeCall(call)));
    this.stops.push(source.onService((service) => this.watch(service)));
  }

  /** Counts one attempt's outcome (the workers' events call this; so does the HTTP tasks route). */
  recordJobOutcome(queue: string, outcome: JobOutcome, seconds: number): void {
    this.jobDuration.observe({ queue, outcome }, seconds);
    if (outcome === 'retried') this.jobRetries.inc({ queue });
    else if (outcome === 'dead') this.jobsDead.inc({ queue });
  }

  /** True once closed. */
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Stops observing and takes these metrics off the registry, so `lh.metrics({ registry })` can
   * register afresh on it.
   */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const stop of this.stops.splice(0)) stop();
    for (const name of this.names) this.registry.removeSingleMetric(name);
  }

  private observeCall(call: EngineCallEvent): void {
    const seconds = call.durationMs / 1000;
    this.engineCalls.observe({ operation: call.operation, outcome: call.outcome }, seconds);
    if (call.outcome !== 'ok') return;
    const size = engineBatchSize(call);
    if (size) this.batchSize.observe({ operation: call.operation }, size);
    switch (call.operation) {
      case 'jobClaimBatch':
        for (const queue of call.params.queues) this.claimLatency.observe({ queue }, seconds);
        for (const [queue, count] of claimedByQueue(call.result ?? []))
          this.jobsClaimed.inc({ queue }, count);
        break;
      case 'leaseAcquire':
        if (call.result) this.countAcquire(call.result);
        break;
      case 'leaseAcquireMany':
        for (const result of call.result ?? []) this.countAcquire(result);
        break;
    }
  }

  private countAcquire(
    result: NonNullable<Extract<EngineCallEvent, { operation: 'leaseAcquire' }>['result']>,
  ): void {
    // A re-acquire by the live holder keeps its term: renewedAt is set only then.
    const label = !result.acquired
      ? 'held'
      : result.lease.renewedAt === null
        ? 'acquired'
        : 'extended';
    this.leaseAcquisitions.inc({ result: label });
  }

  private watch(service: Worker | Election): void {
    if ('instanceId' in service) {
      const election = service.name;
      this.leading.set(election, service.state === 'leader' ? 1 : 0);
      this.stops.push(
        service.events.on('election:elected', () => {
          this.leading.set(election, 1);
          this.electionTerms.inc({ election });
        }),
        service.events.on('election:revoked', () => {
          this.leading.set(election, 0);
          this.electionRevocations.inc({ election });
        }),
      );
      return;
    }
    this.stops.push(
      service.events.on('job:completed', ({ job, durationMs }) =>
        this.recordJobOutcome(job.queue, 'completed', durationMs / 1000),
      ),
      service.events.on('job:failed', ({ job, outcome, durationMs }) => {
        // Refused (no longer ours): another process decides the job's fate.
        if (outcome) this.recordJobOutcome(job.queue, outcome, durationMs / 1000);
      }),
      service.events.on('job:lost', ({ job }) => this.jobsLost.inc({ queue: job.queue })),
    );
  }
}
