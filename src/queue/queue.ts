/**
 * `lh.queue(name)`: the producer's side of the queue. Enqueue is one statement per call,
 * whatever the batch size (overlapping single enqueues share one), and may join the caller's
 * transaction so a job exists only if the business write that asked for it commits (the outbox
 * pattern without an outbox).
 */
import {
  InvalidArgumentError,
  JobFailedError,
  NotFoundError,
  UnavailableError,
  UnsupportedError,
  WaitTimeoutError,
  isLeaseholdError,
} from '../core/errors.js';
import type { JobExplanation, QueueSettings } from '../core/types.js';
import type { CallerTransaction, Engine } from '../engine/engine.js';
import { requireName, requireSafeInteger } from '../core/validate.js';
import type { EnqueueOutcome, JobSpec } from '../engine/jobs.js';
import type { FlowOutcome } from '../engine/flows.js';
import { Coalescer } from '../runtime/coalescer.js';
import { mapLimited } from '../runtime/map-limited.js';
import { toJobSpec, type EnqueueOptions } from './enqueue-options.js';
import { toEnqueuedJob, type EnqueuedJob } from './enqueued-job.js';
import { toSettingsChange, type QueueConfiguration } from './queue-settings.js';
import type { Message } from './message.js';
import {
  changeAll,
  toBatchSize,
  toJobMatch,
  type BulkAction,
  type BulkOptions,
  type JobFilter,
} from './bulk-operations.js';
import { PullConsumer } from './pull-consumer.js';
import {
  fanInFlow,
  flowJobs,
  flowSpecs,
  toEnqueuedFlow,
  toFlowNode,
  type EnqueuedFlow,
  type FanInDefinition,
  type FlowDefinition,
} from './job-flows.js';
import { JobWaiters } from './job-waiters.js';
import { noJobTracing, type CurrentJobTracing } from './job-tracing.js';
import { resolveWait, type WaitForOptions } from './wait-options.js';
import {
  resolveReceive,
  type ReceiveManyOptions,
  type ReceiveOptions,
  type TryReceiveOptions,
} from './receive-options.js';

export type { EnqueuedJob } from './enqueued-job.js';

export interface BulkJob {
  payload: unknown;
  options?: Omit<EnqueueOptions, 'tx'>;
}

/** The most jobs one enqueueMany statement carries; larger inputs are split into batches. */
export const ENQUEUE_BATCH_MAX = 1_000;

/** Batches of one enqueueMany written at once, when their order cannot matter (decision 0209). */
const ENQUEUE_BATCHES_IN_FLIGHT = 2;

/**
 * Single enqueues made outside a transaction, shared by every Queue of one Leasehold: those
 * that overlap go to the database as one multi-row statement (runtime/coalescer.ts; decision
 * 0207). Each still resolves only once its job is committed. The engine's batch enqueue answers
 * a list as the single calls in order would: a repeated dedup key's second job is the first's.
 *
 * Decision 0220: jobs of one partition key, and of one dedup key, commit in call order even
 * when a statement stalls (their order keys); and a shared statement whose answer was lost
 * (it may have committed) is not retried call by call, which would create every job without a
 * key a second time: each caller gets `unavailable` with the outcome unknown.
 */
export function singleEnqueues(engine: Engine): Coalescer<JobSpec, EnqueueOutcome> {
  return new Coalescer<JobSpec, EnqueueOutcome>({
    one: async (spec) => (await engine.jobEnqueue({ jobs: [spec] }))[0]!,
    many: (specs) => engine.jobEnqueue({ jobs: [...specs] }),
    maxBatch: ENQUEUE_BATCH_MAX,
    orderKeys: enqueueOrderKeys,
    failWhole: sharedEnqueueFailure,
  });
}

/**
 * A shared enqueue that failed for want of the database is not retried call by call: with its
 * outcome unknown a retry could create each job twice, and with the database unreachable the
 * retries would only wait one after another. Any other error may be one job's: retried alone.
 */
function sharedEnqueueFailure(error: unknown, size: number): Error | undefined {
  if (!isLeaseholdError(error, 'unavailable')) return undefined;
  if (error.details.outcome !== 'unknown') return error; // nothing was written
  return new UnavailableError(
    `enqueue: the answer of the statement carrying this job and ${size - 1} others was lost; its outcome is unknown (the job may or may not exist; a retry without a dedup key may create it twice)`,
    error,
    { outcome: 'unknown' },
  );
}

/** The keys whose jobs must commit in call order: the partition's and the dedup key's. */
function enqueueOrderKeys(spec: JobSpec): string[] {
  const keys: string[] = [];
  if (spec.partitionKey != null) keys.push(JSON.stringify(['p', spec.queue, spec.partitionKey]));
  if (spec.key != null) keys.push(JSON.stringify(['k', spec.queue, spec.key]));
  return keys;
}

export class Queue {
  readonly name: string;
  private puller: PullConsumer | undefined;

  constructor(
    private readonly engine: Engine,
    name: string,
    private readonly singles: Coalescer<JobSpec, EnqueueOutcome> = singleEnqueues(engine),
    private readonly waiters: JobWaiters = new JobWaiters(engine),
    /** Tracing of enqueues, when installed (decision 0260). */
    private readonly tracing: CurrentJobTracing = noJobTracing,
  ) {
    this.name = requireName('queue', name);
  }

  async enqueue(payload: unknown, options: EnqueueOptions = {}): Promise<EnqueuedJob> {
    const spec = toJobSpec(this.name, payload, options);
    this.checkTransaction(options.tx);
    const tracing = this.tracing();
    if (!tracing) return this.enqueueSpec(spec, options.tx);
    const [job] = await tracing.enqueue(this.name, [spec], async () => [
      await this.enqueueSpec(spec, options.tx),
    ]);
    return job as EnqueuedJob;
  }

  private async enqueueSpec(
    spec: JobSpec,
    tx: CallerTransaction | undefined,
  ): Promise<EnqueuedJob> {
    const outcome = tx
      ? (await this.engine.jobEnqueue({ jobs: [spec], tx }))[0]!
      : await this.singles.run(spec);
    return toEnqueuedJob(outcome);
  }

  /**
   * Enqueues many jobs, one statement per batch of up to 1,000, and answers them in input order.
   * With `tx`, every batch joins that transaction, one after another. Without, each batch commits
   * on its own; when no job has a key or a partition key, two batches are written at once on two
   * connections (while one commits, the next is sent; decision 0209), so ids follow input order
   * within a batch but not always across batches. With keys or partition keys the batches go one
   * after another: a later batch must see an earlier one's keys, and a partition's jobs must
   * become claimable in enqueue order. If a batch fails, no further batch is started, the one
   * still being written is waited for, and the error is thrown; the batches that committed stay.
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
        throw error instanceof InvalidArgumentError ? error.within(`jobs[${index}].`) : error;
      }
    });
    this.checkTransaction(options.tx);
    const tracing = this.tracing();
    if (!tracing) return this.enqueueSpecs(specs, options.tx);
    const send = () => this.enqueueSpecs(specs, options.tx);
    return (await tracing.enqueue(this.name, specs, send)) as EnqueuedJob[];
  }

  private async enqueueSpecs(
    specs: readonly JobSpec[],
    tx: CallerTransaction | undefined,
  ): Promise<EnqueuedJob[]> {
    const batches: JobSpec[][] = [];
    for (let start = 0; start < specs.length; start += ENQUEUE_BATCH_MAX)
      batches.push(specs.slice(start, start + ENQUEUE_BATCH_MAX));
    const independent =
      tx === undefined &&
      specs.every((spec) => spec.key === undefined && spec.partitionKey === undefined);
    const answers = await mapLimited(
      batches,
      independent ? ENQUEUE_BATCHES_IN_FLIGHT : 1,
      (batch) => this.engine.jobEnqueue({ jobs: batch, ...(tx ? { tx } : {}) }),
    );
    const out: EnqueuedJob[] = [];
    for (const outcomes of answers) for (const o of outcomes) out.push(toEnqueuedJob(o));
    return out;
  }

  /**
   * Enqueues a flow (docs/queue.md, "Flows"; decision 0255): the root job on this queue, run
   * once all its `children` (each on its own queue, each maybe with children of its own) are
   * done. Written whole or not at all, in `options.tx` when given. Only the root may have a key:
   * when a live job of this queue holds it, nothing is written and that job is answered with
   * `created: false`. Answers the root and the tree, `{ job, created, children: [{ job,
   * children }] }`, children in their order.
   */
  async enqueueFlow(flow: FlowDefinition): Promise<EnqueuedFlow> {
    const { root, tx } = toFlowNode(this.name, flow);
    this.checkTransaction(tx);
    const write = () => this.engine.jobEnqueueFlow({ root, ...(tx ? { tx } : {}) });
    const tracing = this.tracing();
    if (!tracing) return toEnqueuedFlow(await write());
    // Traced as one enqueue of the whole tree: every job of the flow carries the trace context.
    let outcome: FlowOutcome | undefined;
    await tracing.enqueue(this.name, flowSpecs(root), async () => {
      outcome = await write();
      return flowJobs(outcome);
    });
    return toEnqueuedFlow(outcome!);
  }

  /**
   * "Run once after these N jobs": one child of `children.queue` per payload, and a parent on
   * this queue keyed by `key`, in one flow. Again with the same key while that parent is live
   * (waiting, pending or running): nothing is written, and the parent is answered with
   * `created: false`.
   */
  async enqueueFanIn(key: string, fanIn: FanInDefinition): Promise<EnqueuedFlow> {
    return this.enqueueFlow(fanInFlow(key, fanIn));
  }

  /**
   * Changes the queue's flow control (docs/queue.md, "Flow control"): fields left out stay as
   * they are, `null` removes a limit. Stored in the database and in force from the next claim
   * of every worker; answers the settings now in force.
   */
  async configure(settings: QueueConfiguration): Promise<QueueSettings> {
    const change = toSettingsChange(settings);
    return this.engine.queueConfigure({ queue: this.name, change });
  }

  /** No job of the queue starts anywhere until `resume()`; jobs in flight finish, enqueue works. */
  pause(): Promise<QueueSettings> {
    return this.engine.queueConfigure({ queue: this.name, change: { paused: true } });
  }

  /** Lets the queue's jobs start again, and wakes the workers that serve it. */
  resume(): Promise<QueueSettings> {
    return this.engine.queueConfigure({ queue: this.name, change: { paused: false } });
  }

  /**
   * Runs every matching dead, cancelled or completed job of the queue again: pending now, its
   * attempts reset. A job whose dedup key a live job holds is left as it is (of several sharing
   * a key, the newest is retried). Works in batches of `batchSize` jobs, one statement each;
   * answers how many jobs it retried. See docs/queue.md, "Operations over many jobs".
   */
  retryAll(filter: JobFilter = {}, options: BulkOptions = {}): Promise<number> {
    return this.changeAll('retry', filter, options);
  }

  /**
   * Cancels every matching pending or processing job of the queue (a running job's worker
   * learns it at its next renewal, and its signal fires). Answers how many it cancelled.
   */
  cancelAll(filter: JobFilter = {}, options: BulkOptions = {}): Promise<number> {
    return this.changeAll('cancel', filter, options);
  }

  /** Deletes every matching job of the queue that is not running; answers how many. */
  deleteAll(filter: JobFilter = {}, options: BulkOptions = {}): Promise<number> {
    return this.changeAll('delete', filter, options);
  }

  private async changeAll(
    action: BulkAction,
    filter: JobFilter,
    options: BulkOptions,
  ): Promise<number> {
    // Everything is checked before the first batch: bad input changes nothing.
    const match = toJobMatch(this.name, action, filter);
    return changeAll(this.engine, action, match, toBatchSize(options));
  }

  /**
   * Why job `jobId` of this queue is not running, the first reason that applies (core/types
   * JobExplanation). Throws `not_found` when the queue has no such job.
   */
  async explain(jobId: number): Promise<JobExplanation> {
    const id = requireSafeInteger('jobId', jobId, 1);
    const explanation = await this.engine.jobExplain({ id, queue: this.name });
    if (!explanation) throw new NotFoundError(`job of queue ${this.name}`, id);
    return explanation;
  }

  /**
   * Waits for job `jobId` of this queue to finish (decision 0249) and answers its result.
   * Rejects with `JobFailedError` (code `job_failed`, with the job's `status` and `lastError`)
   * when it ends dead or cancelled; `WaitTimeoutError` (code `timeout`) when `timeout` passes
   * first, the job untouched; `AbortedError` when `signal` fires; `not_found` when the queue has
   * no such job, or it is deleted while waited for (a worker with `removeOnComplete` deletes it
   * as it completes: its result is not kept, so wait with a worker that keeps jobs).
   */
  async waitFor<R = unknown>(jobId: number, options: WaitForOptions = {}): Promise<R> {
    const id = requireSafeInteger('jobId', jobId, 1);
    const wait = resolveWait(options);
    const job = await this.waiters.untilFinished(id, wait, this.name);
    if (!job) throw new NotFoundError(`job of queue ${this.name}`, id);
    switch (job.status) {
      case 'completed':
        return job.result as R;
      case 'dead':
      case 'cancelled':
        throw new JobFailedError(id, job.status, job.lastError);
      default:
        throw new WaitTimeoutError(id, job.status, wait.timeoutMs);
    }
  }

  /** `{ paused, concurrency, perKeyConcurrency, rate, fairness }` as stored now. */
  settings(): Promise<QueueSettings> {
    return this.engine.queueSettingsGet({ queue: this.name });
  }

  /**
   * The pull consumer (decision 0246). Takes one message, waiting until one is available,
   * `wait` passes (then `undefined`) or `signal` aborts (then `AbortedError`). Woken by the
   * queue's notifications, with a claim every second as the fallback.
   */
  async receive<P = unknown>(options: ReceiveOptions): Promise<Message<P> | undefined> {
    const [message] = await this.pull().receive<P>(resolveReceive(options, false));
    return message;
  }

  /** One claim, at once: a message, or `undefined` when none is available now. */
  async tryReceive<P = unknown>(options: TryReceiveOptions): Promise<Message<P> | undefined> {
    const resolved = resolveReceive(options, false);
    const [message] = await this.pull().receive<P>({ ...resolved, waitMs: 0 });
    return message;
  }

  /** Up to `max` messages in one claim statement; waits for the first as `receive` does. */
  async receiveMany<P = unknown>(options: ReceiveManyOptions): Promise<Message<P>[]> {
    return this.pull().receive<P>(resolveReceive(options, true));
  }

  private pull(): PullConsumer {
    this.puller ??= new PullConsumer(this.engine, this.name);
    return this.puller;
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
