/**
 * `lh.queue(name)`: the producer's side of the queue. Enqueue is one statement per call,
 * whatever the batch size (overlapping single enqueues share one), and may join the caller's
 * transaction so a job exists only if the business write that asked for it commits (the outbox
 * pattern without an outbox).
 */
import { InvalidArgumentError, UnsupportedError } from '../core/errors.js';
import type { Job } from '../core/types.js';
import type { CallerTransaction, Engine } from '../engine/engine.js';
import { requireName } from '../core/validate.js';
import type { EnqueueOutcome, JobSpec } from '../engine/jobs.js';
import { Coalescer } from '../runtime/coalescer.js';
import { toJobSpec, type EnqueueOptions } from './enqueue-options.js';

/** A job as enqueue returns it: `created` is false when a live job with the same key existed. */
export type EnqueuedJob = Job & { readonly created: boolean };

export interface BulkJob {
  payload: unknown;
  options?: Omit<EnqueueOptions, 'tx'>;
}

/** The most jobs one enqueueMany statement carries; larger inputs are split into batches. */
export const ENQUEUE_BATCH_MAX = 1_000;

/**
 * Single enqueues made outside a transaction, shared by every Queue of one Leasehold: those
 * that overlap go to the database as one multi-row statement (runtime/coalescer.ts; decision
 * 0207). Each still resolves only once its job is committed. The engine's batch enqueue answers
 * a list as the single calls in order would: a repeated dedup key's second job is the first's.
 */
export function singleEnqueues(engine: Engine): Coalescer<JobSpec, EnqueueOutcome> {
  return new Coalescer<JobSpec, EnqueueOutcome>({
    one: async (spec) => (await engine.jobEnqueue({ jobs: [spec] }))[0]!,
    many: (specs) => engine.jobEnqueue({ jobs: [...specs] }),
    maxBatch: ENQUEUE_BATCH_MAX,
  });
}

export class Queue {
  readonly name: string;

  constructor(
    private readonly engine: Engine,
    name: string,
    private readonly singles: Coalescer<JobSpec, EnqueueOutcome> = singleEnqueues(engine),
  ) {
    this.name = requireName('queue', name);
  }

  async enqueue(payload: unknown, options: EnqueueOptions = {}): Promise<EnqueuedJob> {
    const spec = toJobSpec(this.name, payload, options);
    this.checkTransaction(options.tx);
    const outcome = options.tx
      ? (await this.engine.jobEnqueue({ jobs: [spec], tx: options.tx }))[0]!
      : await this.singles.run(spec);
    return { ...outcome.job, created: outcome.created };
  }

  /**
   * Enqueues many jobs, in order, one statement per batch of up to 1,000. With `tx`, every batch
   * joins that transaction; without, each batch commits on its own.
   */
  async enqueueMany(
    jobs: readonly BulkJob[],
    options: { tx?: CallerTransaction } = {},
  ): Promise<EnqueuedJob[]> {
    if (!Array.isArray(jobs))
      throw new InvalidArgumentError('jobs', 'must be an array of { payload, options }');
    // Validate everything before writing anything: bad input loses nothing and writes nothing.
    const specs = jobs.map((job, index) => {
      if (typeof job !== 'object' || job === null)
        throw new InvalidArgumentError(`jobs[${index}]`, 'must be an object { payload, options? }');
      try {
        return toJobSpec(this.name, job.payload, job.options ?? {});
      } catch (error) {
        if (error instanceof InvalidArgumentError)
          throw new InvalidArgumentError(
            `jobs[${index}].${error.field}`,
            error.message.slice(error.field.length + 2), // without the "field: " prefix
          );
        throw error;
      }
    });
    this.checkTransaction(options.tx);
    const out: EnqueuedJob[] = [];
    for (let start = 0; start < specs.length; start += ENQUEUE_BATCH_MAX) {
      const outcomes = await this.engine.jobEnqueue({
        jobs: specs.slice(start, start + ENQUEUE_BATCH_MAX),
        ...(options.tx ? { tx: options.tx } : {}),
      });
      for (const o of outcomes) out.push({ ...o.job, created: o.created });
    }
    return out;
  }

  private checkTransaction(tx: CallerTransaction | undefined): void {
    if (tx === undefined) return;
    if (typeof (tx as { query?: unknown }).query !== 'function')
      throw new InvalidArgumentError(
        'tx',
        'must have a query(text, values) method, like a pg PoolClient',
      );
    if (!this.engine.capabilities.callerTransactions)
      throw new UnsupportedError(
        `the ${this.engine.name} engine cannot join a caller's transaction (tx)`,
      );
  }
}
