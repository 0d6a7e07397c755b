/**
 * The job family on PostgreSQL, the worker's side (engine/jobs.ts): each operation is one
 * statement from job-queries (the claims' from claim-queries, enqueue's from enqueue-queries),
 * whatever the batch size. This module only shapes parameters and answers: it deduplicates batch
 * input, keeps answers in input order, and runs a claim again when it lost a partition race (see
 * jobClaimBatch). Enqueue, with its dedup and notification coalescing, is postgres-enqueue.ts;
 * the administration of jobs (cancel, retry, reads, rescue, prune) is postgres-job-admin.ts.
 */
import { markLimited } from '../jobs.js';
import type {
  ClaimedJobs,
  EnqueueOutcome,
  JobClaimParams,
  JobCompleteParams,
  JobEnqueueParams,
  JobFailOutcome,
  JobFailParams,
  JobLeaseRef,
  JobOperations,
  JobProgressParams,
  JobRenewed,
  JobRenewParams,
} from '../jobs.js';
import type { PgContext } from './context.js';
import { claimQueries, type ClaimQueries } from './claim-queries.js';
import { jobQueries, type JobQueries } from './job-queries.js';
import { JOB_COLUMNS } from './job-sql.js';
import { mapClaimedValues } from './job-rows.js';
import { PostgresEnqueue } from './postgres-enqueue.js';
import { deadlocked, violated } from './pg-refusals.js';
import { integerArray, toSafeInteger } from './rows.js';
import { withEpoch } from './epoch.js';
import { JobsSizeClass } from './jobs-size-class.js';

/**
 * How often a claim runs: again after losing a race (lostClaimRace), and once more when the
 * plain claim found settings. A partition race needs a job to turn live during the claim
 * itself; a rate refusal, claimers whose clocks disagree. Limited claims of one queue do not
 * race each other: they run one at a time (claim-limits-sql.ts). Either way a new run, on a fresh
 * snapshot, practically always succeeds; past the limit the claim takes nothing (the worker
 * looks again on its next wake-up).
 */
const CLAIM_RUNS = 4;

/** Where a claim's answer says whether any of its queues has settings: after the job's columns. */
const CONFIGURED_AT = JOB_COLUMNS.length;
/** Where it answers the size of the jobs heap (jobs-size-class.ts HEAP_BYTES). */
const HEAP_BYTES_AT = CONFIGURED_AT + 1;

/** A row of a batch statement, which answers the heap's size with every row. */
interface SizedAnswer {
  heap_bytes: unknown;
}

export class PostgresJobs implements JobOperations {
  private readonly sql: JobQueries;
  private readonly claims: ClaimQueries;
  private readonly enqueue: PostgresEnqueue;
  /** Queue lists whose last claim found settings: claimed with JobClaimLimited first. */
  private readonly configuredLists = new Set<string>();
  /** Names the statements that find jobs by id after the heap's size (decision 0282). */
  private readonly sizeClass = new JobsSizeClass();

  constructor(private readonly ctx: PgContext) {
    this.sql = jobQueries(ctx.quotedSchema);
    this.claims = claimQueries(ctx.quotedSchema);
    this.enqueue = new PostgresEnqueue(ctx);
  }

  /** Sends the notifications still owed; the engine calls it before closing. */
  flushNotifications(): Promise<void> {
    return this.enqueue.flushNotifications();
  }

  jobEnqueue(p: JobEnqueueParams): Promise<EnqueueOutcome[]> {
    return this.enqueue.jobEnqueue(p);
  }

  /**
   * Two claim statements (claim-queries.ts): the plain one for queues without settings, and
   * JobClaimLimited, which enforces them. Each answers whether any of its queues has settings,
   * so the choice is remembered per queue list and corrected by the next answer: the plain claim
   * takes nothing when it finds settings (its own snapshot decides), and the claim runs again
   * limited at once. A limit is therefore in force from the first claim that sees it.
   */
  async jobClaimBatch(p: JobClaimParams): Promise<ClaimedJobs> {
    const queues = [...new Set(p.queues)];
    if (queues.length === 0 || p.limit <= 0) return this.ctx.emptyAnswer([]);
    const listKey = queues.join('\u0000');
    let limited = this.configuredLists.has(listKey);
    const types = p.types === undefined ? null : [...p.types];
    for (let run = 1; ; run++) {
      try {
        const name = limited ? 'JobClaimLimited' : 'JobClaimBatch';
        const params = [
          queues,
          p.workerId,
          p.limit,
          p.leaseTtlMs,
          this.ctx.pinnedNow(),
          types,
          p.availableWithinMs ?? null,
        ];
        const rows = await withEpoch(this.ctx, name, () =>
          this.ctx.queryValues(this.sizeClass.name(name), this.claims[name], params),
        );
        // Every answer has at least one row (a claim that took nothing answers one empty row).
        const configured = rows[0]?.[CONFIGURED_AT] === true;
        this.sizeClass.observe(rows[0]?.[HEAP_BYTES_AT]);
        this.rememberConfigured(listKey, configured);
        if (configured && !limited) {
          limited = true;
          continue;
        }
        const jobs = rows
          .filter((values) => values[0] !== null)
          .map((values) => mapClaimedValues(values, p.workerId));
        return configured ? markLimited(jobs) : jobs;
      } catch (error) {
        if (!lostClaimRace(error)) throw error;
        if (run >= CLAIM_RUNS) return limited ? markLimited([]) : [];
      }
    }
  }

  private rememberConfigured(listKey: string, configured: boolean): void {
    if (!configured) {
      this.configuredLists.delete(listKey);
      return;
    }
    // Queue lists are few (one per worker's configuration); the bound is only a safeguard.
    if (this.configuredLists.size >= 1_000) this.configuredLists.clear();
    this.configuredLists.add(listKey);
  }

  async jobRenewLeases(p: JobRenewParams): Promise<JobRenewed[]> {
    const batch = refBatch(p.jobs);
    if (batch.refs.length === 0) return this.ctx.emptyAnswer([]);
    const rows = await this.ctx.query<{ id: string; lease_expires_at: Date } & SizedAnswer>(
      this.sizeClass.name('JobRenewLeases'),
      this.sql.JobRenewLeases,
      [p.workerId, batch.ids, refsParam(batch), p.leaseTtlMs, this.ctx.pinnedNow()],
    );
    this.sizeClass.observe(rows[0]?.heap_bytes);
    return rows.map((row) => ({
      id: toSafeInteger(row.id, 'jobs.id'),
      leaseExpiresAt: row.lease_expires_at,
    }));
  }

  async jobProgress(p: JobProgressParams): Promise<number[]> {
    const batch = refBatch(p.jobs);
    if (batch.refs.length === 0) return this.ctx.emptyAnswer([]);
    const rows = await this.ctx.query<{ id: string } & SizedAnswer>(
      this.sizeClass.name('JobProgress'),
      this.sql.JobProgress,
      [p.workerId, batch.ids, refsParam(batch, (ref) => [ref.progress]), this.ctx.pinnedNow()],
    );
    this.sizeClass.observe(rows[0]?.heap_bytes);
    return rows.map((row) => toSafeInteger(row.id, 'jobs.id'));
  }

  async jobComplete(p: JobCompleteParams): Promise<number[]> {
    const batch = refBatch(p.jobs);
    if (batch.refs.length === 0) return this.ctx.emptyAnswer([]);
    const [now, channel] = [this.ctx.pinnedNow(), this.ctx.notifyChannel];
    // A removed job's result is not kept, so it is not sent either.
    const rows = p.remove
      ? await this.ctx.query<{ id: string } & SizedAnswer>(
          this.sizeClass.name('JobCompleteRemove'),
          this.sql.JobCompleteRemove,
          [p.workerId, batch.ids, refsParam(batch), now, channel],
          p.tx,
        )
      : await this.ctx.query<{ id: string } & SizedAnswer>(
          this.sizeClass.name('JobComplete'),
          this.sql.JobComplete,
          [p.workerId, batch.ids, refsParam(batch, (ref) => [ref.result]), now, channel],
          p.tx,
        );
    this.sizeClass.observe(rows[0]?.heap_bytes);
    return rows.map((row) => toSafeInteger(row.id, 'jobs.id'));
  }

  async jobFail(p: JobFailParams): Promise<JobFailOutcome[]> {
    const batch = refBatch(p.jobs);
    if (batch.refs.length === 0) return this.ctx.emptyAnswer([]);
    const refs = refsParam(batch, (ref) => [ref.error, ref.retryDelayMs, ref.final === true]);
    const rows = await this.ctx.query<{ id: string; status: 'pending' | 'dead' } & SizedAnswer>(
      this.sizeClass.name('JobFail'),
      this.sql.JobFail,
      [p.workerId, batch.ids, refs, this.ctx.pinnedNow(), this.ctx.notifyChannel],
    );
    this.sizeClass.observe(rows[0]?.heap_bytes);
    return rows.map((row) => ({
      id: toSafeInteger(row.id, 'jobs.id'),
      outcome: row.status === 'dead' ? 'dead' : 'retried',
    }));
  }

  async jobHandBack(p: { workerId: string; jobs: readonly JobLeaseRef[] }): Promise<number[]> {
    const batch = refBatch(p.jobs);
    if (batch.refs.length === 0) return this.ctx.emptyAnswer([]);
    const rows = await this.ctx.query<{ id: string } & SizedAnswer>(
      this.sizeClass.name('JobHandBack'),
      this.sql.JobHandBack,
      [p.workerId, batch.ids, refsParam(batch), this.ctx.pinnedNow(), this.ctx.notifyChannel],
    );
    this.sizeClass.observe(rows[0]?.heap_bytes);
    return rows.map((row) => toSafeInteger(row.id, 'jobs.id'));
  }
}

/** A batch's distinct leases in lock order, and its ids as the array parameter `$2`. */
interface RefBatch<R extends JobLeaseRef> {
  refs: { ref: R; o: number }[];
  ids: string;
}

/**
 * The distinct (id, generation) pairs of `list`, the first of each kept with its ordinal so the
 * answer keeps input order, sorted by id (so that a plan reading the ids in index order locks
 * rows in one order), with their ids as an array literal (`{1,2,3}`): node-postgres would quote
 * and escape each element of a JavaScript array, and a flush carries thousands.
 */
function refBatch<R extends JobLeaseRef>(list: readonly R[]): RefBatch<R> {
  const sorted = list
    .map((ref, o) => ({ ref, o }))
    .sort((a, b) => a.ref.id - b.ref.id || a.ref.generation - b.ref.generation || a.o - b.o);
  const refs = sorted.filter(
    (r, i) =>
      i === 0 ||
      r.ref.id !== sorted[i - 1]!.ref.id ||
      r.ref.generation !== sorted[i - 1]!.ref.generation,
  );
  return { refs, ids: integerArray(refs.map((r) => r.ref.id)) };
}

/**
 * The statements' `$3` (job-queries.ts, OWNED): a JSON object keyed `"<id>.<generation>"`,
 * each value the lease's ordinal and then `values(ref)`. JSON turns undefined (and functions)
 * into null, as a job's result or progress is stored.
 *
 * Written as text, not built as an object and stringified: the keys are integers joined by a
 * dot (nothing to escape), and an object of a flush's thousand keys cost the deleting drain
 * about 1 µs of CPU a job, its largest line of our own code in a CPU profile (bench/RESULTS.md).
 */
function refsParam<R extends JobLeaseRef>(
  batch: RefBatch<R>,
  values?: (ref: R) => unknown[],
): string {
  let json = '{';
  for (let i = 0; i < batch.refs.length; i++) {
    const { ref, o } = batch.refs[i]!;
    const value = values ? JSON.stringify([o, ...values(ref)]) : `[${o}]`;
    json += `${i === 0 ? '' : ','}"${ref.id}.${ref.generation}":${value}`;
  }
  return json + '}';
}

/** What the database refuses when racing claimers would break a limit (claim-limits-sql.ts). */
const CLAIM_RACE_GUARDS: ReadonlySet<string> = new Set([
  'jobs_partition_processing',
  'jobs_queue_slot',
  'queues_rate_exact',
]);

/**
 * The claim lost a race: the database refused a second processing job of one partition (or,
 * from a claim of an older version, one queue slot), or a rate window over its limit, or two
 * such refusals deadlocked. Each rolled the claim back entirely.
 */
function lostClaimRace(error: unknown): boolean {
  const guard = violated(error);
  if (guard !== undefined && CLAIM_RACE_GUARDS.has(guard)) return true;
  return deadlocked(error);
}
