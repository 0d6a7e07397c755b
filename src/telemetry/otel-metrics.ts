/**
 * Leasehold's metrics through an OpenTelemetry meter (decision 0260): the series of the
 * Prometheus metrics (decision 0258, src/metrics/leasehold-metrics.ts), observed the same way
 * (engine call events, the events of this Leasehold's workers and elections), named as OTel
 * names things: dotted, units in `unit` rather than in the name, no `_total`. The two gauges
 * 0258 reads from the database at scrape time are left out: a meter's collection should not
 * query PostgreSQL behind the user's back (use `lh.metrics()` or `lh.jobs.counts()` for them).
 *
 * Per-job counters are tallied in plain numbers here and reported through observable counters
 * at each collection: a synchronous OTel counter costs about a microsecond an increment (the
 * SDK hashes the attributes every time), a measurable share of a no-op job's few tens of
 * microseconds (decision 0260's bench ratio). Histograms cannot be pre-aggregated that way;
 * their attribute objects are made once per queue and outcome.
 */
import type {
  Attributes,
  Histogram,
  Meter,
  ObservableCounter,
  ObservableGauge,
  ObservableResult,
} from '@opentelemetry/api';
import { claimedByQueue, engineBatchSize } from '../engine/engine-batch-size.js';
import type { EngineCallEvent } from '../engine/instrumented-engine.js';
import type { Election } from '../locks/election.js';
import type { Worker } from '../queue/worker.js';
import { MESSAGING_DESTINATION, MESSAGING_SYSTEM, SYSTEM } from './attributes.js';

const ELECTION = 'leasehold.election.name';
const OUTCOME = 'leasehold.outcome';
const OPERATION = 'leasehold.engine.operation';
const RESULT = 'leasehold.lease.result';

/** A counter's running totals by attribute set, reported at each collection. */
class Tally {
  private readonly totals = new Map<Attributes, number>();

  constructor(meter: Meter, name: string, description: string, unit: string) {
    this.instrument = meter.createObservableCounter(name, { description, unit });
    this.instrument.addCallback(this.report);
  }

  readonly instrument: ObservableCounter;

  /** `attributes` must be one of the shared objects (the map is keyed by identity). */
  add(attributes: Attributes, count = 1): void {
    this.totals.set(attributes, (this.totals.get(attributes) ?? 0) + count);
  }

  close(): void {
    this.instrument.removeCallback(this.report);
  }

  private readonly report = (result: ObservableResult): void => {
    for (const [attributes, total] of this.totals) result.observe(total, attributes);
  };
}

type JobOutcome = 'completed' | 'retried' | 'dead';

/** The attribute objects of one queue, made once. */
interface QueueAttributes {
  readonly queue: Attributes;
  readonly outcome: Readonly<Record<JobOutcome, Attributes>>;
}

export class OtelMetrics {
  readonly jobsClaimed: Tally;
  readonly jobsCompleted: Tally;
  readonly jobRetries: Tally;
  readonly jobsDead: Tally;
  readonly jobsLost: Tally;
  readonly jobDuration: Histogram;
  readonly claimDuration: Histogram;
  readonly leaseAcquisitions: Tally;
  readonly electionTerms: Tally;
  readonly electionRevocations: Tally;
  readonly electionLeader: ObservableGauge;
  readonly engineCalls: Histogram;
  readonly batchSize: Histogram;
  private readonly leading = new Map<string, number>();
  private readonly queueAttributes = new Map<string, QueueAttributes>();
  private readonly otherAttributes = new Map<string, Attributes>();
  private readonly stops: (() => void)[] = [];

  constructor(meter: Meter) {
    const tally = (name: string, description: string, unit: string): Tally => {
      const t = new Tally(meter, name, description, unit);
      this.stops.push(() => t.close());
      return t;
    };
    this.jobsClaimed = tally(
      'leasehold.jobs.claimed',
      'Jobs claimed by this process, by queue.',
      '{job}',
    );
    this.jobsCompleted = tally(
      'leasehold.jobs.completed',
      'Jobs completed by this process, by queue.',
      '{job}',
    );
    this.jobRetries = tally(
      'leasehold.job.retries',
      'Failed attempts scheduled for a retry, by queue.',
      '{attempt}',
    );
    this.jobsDead = tally(
      'leasehold.jobs.dead',
      'Jobs that failed for good (dead-lettered), by queue.',
      '{job}',
    );
    this.jobsLost = tally(
      'leasehold.jobs.lost',
      'Jobs a worker stopped trusting its lease on, by queue.',
      '{job}',
    );
    this.jobDuration = meter.createHistogram('leasehold.job.duration', {
      description: 'From claim to outcome of an attempt, by queue and outcome.',
      unit: 's',
    });
    this.claimDuration = meter.createHistogram('leasehold.claim.duration', {
      description: 'Time a successful claim spends in the engine, by queue.',
      unit: 's',
    });
    this.leaseAcquisitions = tally(
      'leasehold.lease.acquisitions',
      'Lease acquires by result: acquired, extended or held.',
      '{acquire}',
    );
    this.electionTerms = tally(
      'leasehold.election.terms',
      'Terms this process won, by election.',
      '{term}',
    );
    this.electionRevocations = tally(
      'leasehold.election.revocations',
      'Terms this process lost or gave up, by election.',
      '{term}',
    );
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
    this.engineCalls.record(seconds, this.other(call.operation, OPERATION, OUTCOME, call.outcome));
    if (call.outcome !== 'ok') return;
    const size = engineBatchSize(call);
    if (size) this.batchSize.record(size, this.other(call.operation));
    switch (call.operation) {
      case 'jobClaimBatch': {
        for (const queue of call.params.queues)
          this.claimDuration.record(seconds, this.forQueue(queue).queue);
        for (const [queue, count] of claimedByQueue(call.result ?? []))
          this.jobsClaimed.add(this.forQueue(queue).queue, count);
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
      const attributes = this.other(election, ELECTION);
      this.leading.set(election, service.state === 'leader' ? 1 : 0);
      this.stops.push(
        service.events.on('election:elected', () => {
          this.leading.set(election, 1);
          this.electionTerms.add(attributes);
        }),
        service.events.on('election:revoked', () => {
          this.leading.set(election, 0);
          this.electionRevocations.add(attributes);
        }),
      );
      return;
    }
    this.stops.push(
      service.events.on('job:completed', ({ job, durationMs }) => {
        const attributes = this.forQueue(job.queue);
        this.jobsCompleted.add(attributes.queue);
        this.jobDuration.record(durationMs / 1000, attributes.outcome.completed);
      }),
      service.events.on('job:failed', ({ job, outcome, durationMs }) => {
        if (!outcome) return; // refused: another process decides the job's fate
        const attributes = this.forQueue(job.queue);
        this.jobDuration.record(durationMs / 1000, attributes.outcome[outcome]);
        (outcome === 'retried' ? this.jobRetries : this.jobsDead).add(attributes.queue);
      }),
      service.events.on('job:lost', ({ job }) => this.jobsLost.add(this.forQueue(job.queue).queue)),
    );
  }

  close(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  private forQueue(name: string): QueueAttributes {
    let attributes = this.queueAttributes.get(name);
    if (!attributes) {
      const queue = { [MESSAGING_SYSTEM]: SYSTEM, [MESSAGING_DESTINATION]: name };
      const outcome = (value: JobOutcome): Attributes => ({ ...queue, [OUTCOME]: value });
      attributes = {
        queue,
        outcome: {
          completed: outcome('completed'),
          retried: outcome('retried'),
          dead: outcome('dead'),
        },
      };
      this.queueAttributes.set(name, attributes);
    }
    return attributes;
  }

  /**
   * The shared attribute object of an engine operation (`key` OPERATION) or election, with one
   * more attribute when given: made once, so the tallies (keyed by identity) add up.
   */
  private other(value: string, key = OPERATION, extraKey?: string, extra?: string): Attributes {
    const id = `${key}\u0000${value}\u0000${extraKey ?? ''}\u0000${extra ?? ''}`;
    let attributes = this.otherAttributes.get(id);
    if (!attributes) {
      attributes = { [key]: value, ...(extraKey ? { [extraKey]: extra } : {}) };
      this.otherAttributes.set(id, attributes);
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
    this.leaseAcquisitions.add(this.other(label, RESULT));
  }
}
