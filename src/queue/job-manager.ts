/**
 * `lh.jobs`: jobs by id, across queues, for the people and programs that operate a queue rather
 * than produce into it (`lh.queue(name)`) or consume it in process (`lh.worker`):
 *
 * - reads and administration: `get`, `list`, `search`, `actOn`, `counts`, `queues`, `explain`, `steps`, `workers`, `retry`,
 *   `registerWorker` and `workerHeartbeat` for workers outside the toolkit,
 *   `cancel`, `delete`, and `waitUntilFinished`;
 * - the claim protocol, for a consumer outside this process that pulls jobs one call at a time
 *   (the HTTP task API): `claim`, `renewClaims`, `complete`, `fail`, `handBack`. Each is guarded
 *   by the claimant and the claim's generation, exactly as the in-process worker's calls are.
 *
 * Like the other managers it validates every input, so engines never see bad data.
 */
import { toMilliseconds, type Duration } from '../core/duration.js';
import { InvalidArgumentError, NotFoundError } from '../core/errors.js';
import {
  JOB_STATUSES,
  WORKER_STATUSES,
  defaultQueueSettings,
  type Job,
  type JobExplanation,
  type JobStatus,
  type JobStep,
  type QueueSettings,
  type WorkerInfo,
  type WorkerStatus,
} from '../core/types.js';
import { LIMITS, requireName, requireOneOf, requireSafeInteger } from '../core/validate.js';
import type { Engine } from '../engine/engine.js';
import type { JobChildren } from '../engine/flows.js';
import type { JobFailOutcome, JobLeaseRef, JobRenewed } from '../engine/jobs.js';
import type { JobCount } from '../engine/job-admin.js';
import type { WorkerRegisterParams } from '../engine/workers.js';
import type { JobSearchPage } from '../engine/job-admin.js';
import { JobWaiters } from './job-waiters.js';
import { toJobSearch, type JobSearchOptions } from './job-search.js';
import {
  actOnSelection,
  toSelection,
  toSelectionAction,
  type SelectionResult,
} from './job-selection.js';
import type { BulkAction } from './bulk-operations.js';
import {
  resolveTrendsOptions,
  trendRange,
  trendSeries,
  type TrendSeries,
  type TrendsOptions,
} from './trend-series.js';
import { resolveWait, type WaitForOptions } from './wait-options.js';
import { requireReportedStatus, requireWorkerRegistration } from './worker-registration.js';

export interface JobListOptions {
  queue?: string;
  status?: JobStatus;
  partitionKey?: string;
  /** At most this many, newest first (default 100, at most 1,000). */
  limit?: number;
  offset?: number;
}

export interface ClaimOptions {
  /** Who claims: the claim is theirs, and every later call must name them. */
  workerId: string;
  /** How long the claim lasts unless renewed. */
  leaseTtl: Duration;
  /** At most this many jobs (default 1). */
  limit?: number;
}

/** One claimed job to act on: its id and the generation its claim was given. */
export type ClaimRef = JobLeaseRef;

export interface JobFailureReport extends ClaimRef {
  error: string;
  /** How long before the job may run again (unless this was its last attempt). */
  retryDelay: Duration;
}

/**
 * One queue as operators see it (`lh.jobs.queues()`, GET /api/queues): its settings (the
 * defaults when never configured) and how many of its jobs are in each status.
 */
export interface QueueOverview extends QueueSettings {
  readonly counts: Readonly<Record<JobStatus, number>>;
}

/** Claims last between 100 ms and a day, as the in-process worker's job leases. */
const claimTtlBounds = { min: 100, max: LIMITS.ttlMaxMs };

export class JobManager {
  constructor(
    private readonly engine: Engine,
    private readonly waiters: JobWaiters = new JobWaiters(engine),
  ) {}

  async get(id: number): Promise<Job | null> {
    return this.engine.jobGet({ id: requireId(id) });
  }

  /**
   * The direct children of a flow's parent (decision 0255), in enqueue order: the first
   * `limit` (default 100), and how many there are in all. None for a job without children.
   */
  async children(id: number, options: { limit?: number } = {}): Promise<JobChildren> {
    requireObject(options);
    return this.engine.jobChildren({ id: requireId(id), limit: requireLimit(options.limit) });
  }

  /** Jobs newest first, of one queue, status or partition key if given. */
  async list(options: JobListOptions = {}): Promise<Job[]> {
    requireObject(options);
    return this.engine.jobList({
      ...(options.queue === undefined ? {} : { queue: requireName('queue', options.queue) }),
      ...(options.status === undefined
        ? {}
        : { status: requireOneOf('status', options.status, JOB_STATUSES) }),
      ...(options.partitionKey === undefined
        ? {}
        : { partitionKey: requireName('partitionKey', options.partitionKey) }),
      limit: requireLimit(options.limit),
      offset: requireSafeInteger('offset', options.offset ?? 0, 0),
    });
  }

  /**
   * One page of the job explorer's search (decision 0266): the jobs matching every given filter
   * field, newest (or oldest) first, from `cursor` (the previous page's `next`) on, with the
   * filter's total (`totalExact`: a count, else the planner's estimate). A page reads a bounded
   * number of jobs, so it may hold fewer than `limit` while `next` is not null: ask again.
   */
  async search(options: JobSearchOptions = {}): Promise<JobSearchPage> {
    return this.engine.jobSearch(toJobSearch(options));
  }

  /**
   * Retries, cancels or deletes each job of `ids` (at most 500) as the one-job action would,
   * and answers what became of each, in order: `done`, `not_found`, or `refused` with its status.
   */
  async actOn(action: BulkAction, ids: readonly number[]): Promise<SelectionResult[]> {
    const act = toSelectionAction(action);
    return actOnSelection(this.engine, act, toSelection(ids));
  }

  /** How many jobs each queue holds in each status (fleet-wide, counted in the engine). */
  async counts(): Promise<JobCount[]> {
    return this.engine.jobCounts();
  }

  /**
   * Every queue that has jobs or settings, by name: its settings and its jobs counted by status
   * (every status present, 0 when none). Settings and counts are two reads, not one snapshot.
   */
  async queues(): Promise<QueueOverview[]> {
    const [counts, settings] = await Promise.all([
      this.engine.jobCounts(),
      this.engine.queueSettingsList(),
    ]);
    const byQueue = new Map<
      string,
      { settings: QueueSettings; counts: Record<JobStatus, number> }
    >();
    const entry = (queue: string) => {
      let found = byQueue.get(queue);
      if (!found) {
        const zero = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<
          JobStatus,
          number
        >;
        found = { settings: defaultQueueSettings(queue), counts: zero };
        byQueue.set(queue, found);
      }
      return found;
    };
    for (const s of settings) entry(s.queue).settings = s;
    for (const c of counts) entry(c.queue).counts[c.status] += c.count;
    return [...byQueue.keys()]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((queue) => {
        const { settings: s, counts: n } = byQueue.get(queue)!;
        return { ...s, counts: n };
      });
  }

  /**
   * The queues' trends over the last hour (a point a minute) or day (a point per 5 minutes):
   * throughput, failures, pickup latency and depth, from the per-minute rows the maintainer
   * records (decision 0265), summed over queues unless `queue` is given.
   */
  async trends(options: TrendsOptions = {}): Promise<TrendSeries> {
    const { window, queue } = resolveTrendsOptions(options);
    const range = trendRange(window, await this.engine.now());
    const rows = await this.engine.trendsList({
      ...range,
      ...(queue === undefined ? {} : { queue }),
    });
    return trendSeries(window, queue ?? null, range, rows);
  }

  /**
   * Why job `id` is not running (core/types JobExplanation), whatever its queue; null when
   * there is no such job. `lh.queue(name).explain(id)` is the same for one queue.
   */
  async explain(id: number): Promise<JobExplanation | null> {
    return this.engine.jobExplain({ id: requireId(id) });
  }

  /**
   * The steps job `id` has recorded (`ctx.step`, `ctx.sleep`; decision 0254), in recording
   * order, each with its value, the generation that recorded it and when; empty when it has
   * none or there is no such job.
   */
  async steps(id: number): Promise<JobStep[]> {
    return this.engine.jobSteps({ id: requireId(id) });
  }

  /**
   * Waits until job `id` is finished (completed, dead or cancelled) and answers it; when
   * `timeout` passes first, answers it as it is then (check `status`). Throws `not_found` when
   * there is no such job, or it is deleted while waited for; `aborted` when `signal` fires.
   * `lh.queue(name).waitFor` answers the result itself (decision 0249).
   */
  async waitUntilFinished(id: number, options: WaitForOptions = {}): Promise<Job> {
    const jobId = requireId(id);
    const job = await this.waiters.untilFinished(jobId, resolveWait(options));
    if (!job) throw new NotFoundError('job', jobId);
    return job;
  }

  /** Registered workers, of one status if given. */
  async workers(options: { status?: WorkerStatus; limit?: number } = {}): Promise<WorkerInfo[]> {
    requireObject(options);
    return this.engine.workerList({
      ...(options.status === undefined
        ? {}
        : { status: requireOneOf('status', options.status, WORKER_STATUSES) }),
      limit: requireLimit(options.limit),
    });
  }

  /**
   * Registers a worker that runs outside this toolkit's workers (an HTTP task worker: `kind`
   * `http`), or registers one again: alive, as if it had just started. It then keeps its row
   * fresh with `workerHeartbeat`; maintenance marks it dead when it goes silent, as for every
   * worker. Answers the row.
   */
  async registerWorker(worker: WorkerRegisterParams): Promise<WorkerInfo> {
    return this.engine.workerRegister(requireWorkerRegistration(worker));
  }

  /**
   * Refreshes a registered worker's row: last seen now, `inFlight` jobs in hand, and its status
   * when it says one (`draining`, `stopped`, or `alive` again). Null when no such worker is
   * registered (its row was never written, or was pruned): register again.
   */
  async workerHeartbeat(
    id: string,
    report: { inFlight: number; status?: WorkerStatus },
  ): Promise<WorkerInfo | null> {
    requireObject(report);
    return this.engine.workerHeartbeat({
      id: requireName('id', id),
      inFlight: requireSafeInteger('inFlight', report.inFlight, 0),
      ...(report.status === undefined ? {} : { status: requireReportedStatus(report.status) }),
    });
  }

  /** Runs a finished, dead or cancelled job again; null when it is in no state to be retried. */
  async retry(id: number): Promise<Job | null> {
    return this.engine.jobRetry({ id: requireId(id) });
  }

  /**
   * Cancels a pending or running job (its worker learns it at its next renewal). Answers the
   * job as it is, so a job already finished comes back unchanged; null when there is none.
   */
  async cancel(id: number): Promise<Job | null> {
    return this.engine.jobCancel({ id: requireId(id) });
  }

  /** Deletes a job that is not running; false when there is none or it is running. */
  async delete(id: number): Promise<boolean> {
    return this.engine.jobDelete({ id: requireId(id) });
  }

  /** Claims up to `limit` ready jobs of these queues for `workerId`. */
  async claim(queues: string | readonly string[], options: ClaimOptions): Promise<Job[]> {
    requireObject(options);
    const list = typeof queues === 'string' ? [queues] : queues;
    if (!Array.isArray(list) || list.length === 0)
      throw new InvalidArgumentError('queues', 'must be a queue name or a non-empty array of them');
    return this.engine.jobClaimBatch({
      queues: list.map((q: unknown) => requireName('queue', q)),
      workerId: requireName('workerId', options.workerId),
      limit: requireSafeInteger('limit', options.limit ?? 1, 1),
      leaseTtlMs: toMilliseconds('leaseTtl', options.leaseTtl, claimTtlBounds),
    });
  }

  /** Extends the claims still `workerId`'s with these generations; answers those it extended. */
  async renewClaims(
    workerId: string,
    claims: readonly ClaimRef[],
    options: { leaseTtl: Duration },
  ): Promise<JobRenewed[]> {
    return this.engine.jobRenewLeases({
      workerId: requireName('workerId', workerId),
      jobs: requireClaims(claims),
      leaseTtlMs: toMilliseconds('leaseTtl', options.leaseTtl, claimTtlBounds),
    });
  }

  /** Completes the jobs still claimed by `workerId` with these generations; answers their ids. */
  async complete(
    workerId: string,
    claims: readonly (ClaimRef & { result?: unknown })[],
  ): Promise<number[]> {
    const refs = requireClaims(claims);
    return this.engine.jobComplete({
      workerId: requireName('workerId', workerId),
      jobs: refs.map((ref, i) => ({ ...ref, result: claims[i]!.result ?? null })),
    });
  }

  /** Reports failed attempts: each job is retried after its delay, or dead at its last attempt. */
  async fail(workerId: string, failures: readonly JobFailureReport[]): Promise<JobFailOutcome[]> {
    const refs = requireClaims(failures);
    return this.engine.jobFail({
      workerId: requireName('workerId', workerId),
      jobs: refs.map((ref, i) => ({
        ...ref,
        error: String(failures[i]!.error),
        retryDelayMs: toMilliseconds(`jobs[${i}].retryDelay`, failures[i]!.retryDelay, {
          min: 0,
          max: LIMITS.ttlMaxMs,
        }),
      })),
    });
  }

  /** Hands claimed jobs back: pending again at once, the attempt not counted. Answers their ids. */
  async handBack(workerId: string, claims: readonly ClaimRef[]): Promise<number[]> {
    return this.engine.jobHandBack({
      workerId: requireName('workerId', workerId),
      jobs: requireClaims(claims),
    });
  }
}

function requireObject(options: unknown): void {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object');
}

function requireId(id: unknown): number {
  return requireSafeInteger('id', id, 1);
}

function requireLimit(limit: number | undefined): number {
  const value = requireSafeInteger('limit', limit ?? 100, 1);
  if (value > LIMITS.listMaxLimit)
    throw new InvalidArgumentError('limit', `must be at most ${LIMITS.listMaxLimit}`);
  return value;
}

function requireClaims(claims: readonly ClaimRef[]): ClaimRef[] {
  if (!Array.isArray(claims))
    throw new InvalidArgumentError('jobs', 'must be an array of { id, generation }');
  return claims.map((c: ClaimRef, i) => {
    if (typeof c !== 'object' || c === null)
      throw new InvalidArgumentError(`jobs[${i}]`, 'must be an object { id, generation }');
    return {
      id: requireSafeInteger(`jobs[${i}].id`, c.id, 1),
      generation: requireSafeInteger(`jobs[${i}].generation`, c.generation, 1),
    };
  });
}
