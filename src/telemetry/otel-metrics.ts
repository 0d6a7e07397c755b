/**
 * Leasehold's metrics through an OpenTelemetry meter (decision 0260): the series of the
 * Prometheus metrics (decision 0258, src/metrics/leasehold-metrics.ts), observed the same way
 * (engine call events, the events of this Leasehold's workers and elections), named as OTel
 * names things: dotted, units in `unit` rather than in the name, no `_total`. The two gauges
 * 0258 reads from the database at scrape time are left out: a meter's collection should not
 * query PostgreSQL behind the user's back (use `lh.metrics()` or `lh.jobs.counts()` for them).
 */
import type {
  Attributes,
  Counter,
  Histogram,
  Meter,
  ObservableGauge,
  ObservableResult,
} from '@opentelemetry/api';
import type { EngineCallEvent } from '../engine/instrumented-engine.js';
import type { Election } from '../locks/election.js';
import type { Worker } from '../queue/worker.js';
import { MESSAGING_DESTINATION, MESSAGING_SYSTEM, SYSTEM } from './attributes.js';

const ELECTION = 'leasehold.election.name';
const OUTCOME = 'leasehold.outcome';
const OPERATION = 'leasehold.engine.operation';
const RESULT = 'leasehold.lease.result';

/** Engine operations that carry a batch, and how many items each call carried. */
const BATCH_SIZE: Partial<Record<EngineCallEvent['operation'], (call: EngineCallEvent) => number>> =
  {
    jobEnqueue: (c) => (c.operation === 'jobEnqueue' ? c.params.jobs.length : 0),
    jobComplete: (c) => (c.operation === 'jobComplete' ? c.params.jobs.length : 0),
    jobFail: (c) => (c.operation === 'jobFail' ? c.params.jobs.length : 0),
    jobRenewLeases: (c) => (c.operation === 'jobRenewLeases' ? c.params.jobs.length : 0),
    jobClaimBatch: (c) => (c.operation === 'jobClaimBatch' ? (c.result?.length ?? 0) : 0),
    leaseAcquireMany: (c) => (c.operation === 'leaseAcquireMany' ? c.params.length : 0),
    leaseRenewMany: (c) => (c.operation === 'leaseRenewMany' ? c.params.length : 0),
    leaseReleaseMany: (c) => (c.operation === 'leaseReleaseMany' ? c.params.length : 0),
  };

export class OtelMetrics {
  readonly jobsClaimed: Counter;
  readonly jobsCompleted: Counter;
  readonly jobRetries: Counter;
  readonly jobsDead: Counter;
  readonly jobsLost: Counter;
  readonly jobDuration: Histogram;
  readonly claimDuration: Histogram;
  readonly leaseAcquisitions: Counter;
  readonly electionTerms: Counter;
  readonly electionRevocations: Counter;
  readonly electionLeader: ObservableGauge;
  readonly engineCalls: Histogram;
  readonly batchSize: Histogram;
  private readonly leading = new Map<string, number>();
  /** Attribute objects per queue, made once: a job's counter increment allocates nothing. */
  private readonly queueAttributes = new Map<string, Attributes>();
  private readonly stops: (() => void)[] = [];

  constructor(meter: Meter) {
    this.jobsClaimed = meter.createCounter('leasehold.jobs.claimed', {
      description: 'Jobs claimed by this process, by queue.',
      unit: '{job}',
    });
    this.jobsCompleted = meter.createCounter('leasehold.jobs.completed', {
      description: 'Jobs completed by this process, by queue.',
      unit: '{job}',
    });
    this.jobRetries = meter.createCounter('leasehold.job.retries', {
      description: 'Failed attempts scheduled for a retry, by queue.',
      unit: '{attempt}',
    });
    this.jobsDead = meter.createCounter('leasehold.jobs.dead', {
      description: 'Jobs that failed for good (dead-lettered), by queue.',
      unit: '{job}',
    });
    this.jobsLost = meter.createCounter('leasehold.jobs.lost', {
      description: 'Jobs a worker stopped trusting its lease on, by queue.',
      unit: '{job}',
    });
    this.jobDuration = meter.createHistogram('leasehold.job.duration', {
      description: 'From claim to outcome of an attempt, by queue and outcome.',
      unit: 's',
    });
    this.claimDuration = meter.createHistogram('leasehold.claim.duration', {
      description: 'Time a successful claim spends in the engine, by queue.',
      unit: 's',
    });
    this.leaseAcquisitions = meter.createCounter('leasehold.lease.acquisitions', {
      description: 'Lease acquires by result: acquired, extended or held.',
      unit: '{acquire}',
    });
    this.electionTerms = meter.createCounter('leasehold.election.terms', {
      description: 'Terms this process won, by election.',
      unit: '{term}',
    });
    this.electionRevocations = meter.createCounter('leasehold.election.revocations', {
      description: 'Terms this process lost or gave up, by election.',
      unit: '{term}',
    });
    this.electionLeader = meter.createObservableGauge('leasehold.election.leader', {
      description: '1 while this process leads the election, 0 otherwise.',
    });
    const observeLeading = (result: ObservableResult): void => {
      for (const [election, value] of this.leading) result.observe(value, { [ELECTION]: election });
    };
    this.electionLeader.addCallback(observeLeading);
    this.stops.push(() => this.electionLeader.removeCallback(observeLeading));
    this.engineCalls = meter.createHistogram('leasehold.engine.call.duration', {
      description: 'Engine calls made by this process, by operation and outcome.',
      unit: 's',
    });
    this.batchSize = meter.createHistogram('leasehold.engine.batch.size', {
      description: 'Items per batched engine call, by operation.',
      unit: '{item}',
    });
  }

  /** The engine-call listener (bound: hand it to `lh.on('engine', ...)`). */
  readonly observe = (call: EngineCallEvent): void => {
    const seconds = call.durationMs / 1000;
    this.engineCalls.record(seconds, { [OPERATION]: call.operation, [OUTCOME]: call.outcome });
    if (call.outcome !== 'ok') return;
    const size = BATCH_SIZE[call.operation]?.(call);
    if (size) this.batchSize.record(size, { [OPERATION]: call.operation });
    switch (call.operation) {
      case 'jobClaimBatch': {
        for (const queue of call.params.queues)
          this.claimDuration.record(seconds, this.forQueue(queue));
        const jobs = call.result ?? [];
        if (jobs.length === 0) break;
        const counts = new Map<string, number>();
        for (const job of jobs) counts.set(job.queue, (counts.get(job.queue) ?? 0) + 1);
        for (const [queue, count] of counts) this.jobsClaimed.add(count, this.forQueue(queue));
        break;
      }
      case 'leaseAcquire':
        if (call.result) this.countAcquire(call.result);
        break;
      case 'leaseAcquireMany':
        for (const result of call.result ?? []) this.countAcquire(result);
        break;
    }
  };

  watch(service: Worker | Election): void {
    if ('instanceId' in service) {
      const election = service.name;
      const attributes = { [ELECTION]: election };
      this.leading.set(election, service.state === 'leader' ? 1 : 0);
      this.stops.push(
        service.events.on('election:elected', () => {
          this.leading.set(election, 1);
          this.electionTerms.add(1, attributes);
        }),
        service.events.on('election:revoked', () => {
          this.leading.set(election, 0);
          this.electionRevocations.add(1, attributes);
        }),
      );
      return;
    }
    this.stops.push(
      service.events.on('job:completed', ({ job, durationMs }) => {
        const attributes = this.forQueue(job.queue);
        this.jobsCompleted.add(1, attributes);
        this.jobDuration.record(durationMs / 1000, { ...attributes, [OUTCOME]: 'completed' });
      }),
      service.events.on('job:failed', ({ job, outcome, durationMs }) => {
        if (!outcome) return; // refused: another process decides the job's fate
        const attributes = this.forQueue(job.queue);
        this.jobDuration.record(durationMs / 1000, { ...attributes, [OUTCOME]: outcome });
        (outcome === 'retried' ? this.jobRetries : this.jobsDead).add(1, attributes);
      }),
      service.events.on('job:lost', ({ job }) => this.jobsLost.add(1, this.forQueue(job.queue))),
    );
  }

  close(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  private forQueue(queue: string): Attributes {
    let attributes = this.queueAttributes.get(queue);
    if (!attributes) {
      attributes = { [MESSAGING_SYSTEM]: SYSTEM, [MESSAGING_DESTINATION]: queue };
      this.queueAttributes.set(queue, attributes);
    }
    return attributes;
  }

  private countAcquire(
    result: NonNullable<Extract<EngineCallEvent, { operation: 'leaseAcquire' }>['result']>,
  ): void {
    const label = !result.acquired
      ? 'held'
      : result.lease.renewedAt === null
        ? 'acquired'
        : 'extended';
    this.leaseAcquisitions.add(1, { [RESULT]: label });
  }
}
