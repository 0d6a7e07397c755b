/**
 * The job administration family on PostgreSQL (engine/job-admin.ts): each operation is one
 * statement from job-admin-queries (the explorer's search from job-search-queries, with its
 * estimate beside it). This module only shapes parameters and answers: it runs an operation over
 * many jobs again when a race rolled it back, and turns a retry that met a live job of its key
 * into a ConflictError. The worker's side of a job is postgres-jobs.ts.
 */
import { ConflictError } from '../../core/errors.js';
import type { Job } from '../../core/types.js';
import { LEASE_EXPIRED, SEARCH_SCAN_ROWS } from '../job-admin.js';
import type {
  JobAdminOperations,
  JobBatchOutcome,
  JobBatchParams,
  JobCount,
  JobListParams,
  JobSearchPage,
  JobSearchParams,
  JobPruneParams,
  JobRescueParams,
  JobRescueResult,
} from '../job-admin.js';
import type { PgContext } from './context.js';
import { jobAdminQueries, type JobAdminQueries } from './job-admin-queries.js';
import { jobSearchQueries, type JobSearchQueries } from './job-search-queries.js';
import { mapJob, type JobRow } from './job-rows.js';
import { deadlocked, violated } from './pg-refusals.js';
import { toSafeInteger } from './rows.js';

/** How often a batch over many jobs runs when a race rolled it back (see jobRetryMatching). */
const MATCHING_RUNS = 4;

export class PostgresJobAdmin implements JobAdminOperations {
  private readonly sql: JobAdminQueries;
  private readonly searchSql: JobSearchQueries;

  constructor(private readonly ctx: PgContext) {
    this.sql = jobAdminQueries(ctx.quotedSchema);
    this.searchSql = jobSearchQueries(ctx.quotedSchema);
  }

  jobCancel(p: { id: number }): Promise<Job | null> {
    return this.oneJob('JobCancel', this.sql.JobCancel, [
      p.id,
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
    ]);
  }

  async jobRetry(p: { id: number }): Promise<Job | null> {
    try {
      return await this.oneJob('JobRetry', this.sql.JobRetry, [
        p.id,
        this.ctx.pinnedNow(),
        this.ctx.notifyChannel,
      ]);
    } catch (error) {
      if (violated(error) !== 'jobs_live_key') throw error;
      const job = await this.jobGet({ id: p.id });
      throw new ConflictError(`a live job of queue "${job?.queue}" already has key "${job?.key}"`, {
        id: p.id,
        queue: job?.queue,
        key: job?.key,
      });
    }
  }

  async jobDelete(p: { id: number }): Promise<boolean> {
    const rows = await this.ctx.query<{ deleted: number }>('JobDelete', this.sql.JobDelete, [
      p.id,
      this.ctx.notifyChannel,
    ]);
    return (rows[0]?.deleted ?? 0) > 0;
  }

  /**
   * A retry that meets a live job of the same key committed after its snapshot, or a deadlock,
   * is rolled back whole by the database and runs again on a fresh snapshot, which sees that
   * job (and so leaves the older one as it is).
   */
  jobRetryMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    return this.matchingBatch('JobRetryMatching', p, [
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
    ]);
  }

  jobCancelMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    return this.matchingBatch('JobCancelMatching', p, [
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
    ]);
  }

  jobDeleteMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    return this.matchingBatch('JobDeleteMatching', p, [this.ctx.notifyChannel]);
  }

  private async matchingBatch(
    name: 'JobRetryMatching' | 'JobCancelMatching' | 'JobDeleteMatching',
    p: JobBatchParams,
    tail: unknown[],
  ): Promise<JobBatchOutcome> {
    if (p.limit <= 0 || p.match.statuses.length === 0)
      return this.ctx.emptyAnswer({ changed: 0, next: null });
    const m = p.match;
    const values = [
      m.queue,
      [...m.statuses],
      m.type ?? null,
      m.key ?? null,
      m.partitionKey ?? null,
      m.createdSince ?? null,
      m.createdBefore ?? null,
      p.beforeId ?? null,
      p.limit,
      ...tail,
    ];
    for (let run = 1; ; run++) {
      try {
        const rows = await this.ctx.query<{ changed: number; next: string | null }>(
          name,
          this.sql[name],
          values,
        );
        const { changed, next } = rows[0]!;
        return { changed, next: next === null ? null : toSafeInteger(next, 'jobs.id') };
      } catch (error) {
        const raced = violated(error) === 'jobs_live_key' || deadlocked(error);
        if (!raced || run >= MATCHING_RUNS) {
          if (violated(error) === 'jobs_live_key')
            throw new ConflictError(
              `a live job of queue "${m.queue}" took the key of a job being retried; run the retry again`,
              { queue: m.queue },
            );
          throw error;
        }
      }
    }
  }

  jobGet(p: { id: number }): Promise<Job | null> {
    return this.oneJob('JobGet', this.sql.JobGet, [p.id]);
  }

  jobWatch(p: { id: number }): Promise<Job | null> {
    return this.oneJob('JobWatch', this.sql.JobWatch, [p.id]);
  }

  /** Newest first (id descending), as `GET /api/jobs` and the dashboard present them. */
  async jobList(p: JobListParams): Promise<Job[]> {
    const rows = await this.ctx.query<JobRow>('JobList', this.sql.JobList, [
      p.queue ?? null,
      p.status ?? null,
      p.partitionKey ?? null,
      p.limit,
      p.offset,
    ]);
    return rows.map(mapJob);
  }

  /**
   * One page of the explorer's search (decision 0266) and the filter's total: a count when this
   * first page holds every match, else the planner's estimate (EXPLAIN), run beside the page.
   */
  async jobSearch(p: JobSearchParams): Promise<JobSearchPage> {
    const scanLimit = p.scanLimit ?? SEARCH_SCAN_ROWS;
    const filter = [
      p.queue ?? null,
      p.statuses ? [...p.statuses] : null,
      p.type ?? null,
      p.key ?? null,
      p.partitionKey ?? null,
      p.createdSince ?? null,
      p.createdBefore ?? null,
      p.text === undefined ? null : `%${escapeLike(p.text)}%`,
    ];
    const [name, text] =
      p.order === 'newest'
        ? ['JobSearchNewest', this.searchSql.JobSearchNewest]
        : ['JobSearchOldest', this.searchSql.JobSearchOldest];
    const [rows, plan] = await Promise.all([
      this.ctx.query<JobRow & { scanned: number; edge: string | null }>(name, text, [
        ...filter,
        p.cursor ?? null,
        p.limit,
        scanLimit,
      ]),
      this.ctx.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
        'JobSearchEstimate',
        this.searchSql.JobSearchEstimate,
        filter,
      ),
    ]);
    const jobs = rows.filter((r) => r.id !== null).map(mapJob);
    const scan = rows[0]!;
    const next =
      jobs.length >= p.limit
        ? jobs[jobs.length - 1]!.id
        : scan.scanned >= scanLimit && scan.edge !== null
          ? toSafeInteger(scan.edge, 'jobs.id')
          : null;
    if (p.cursor === undefined && next === null)
      return { jobs, next, total: jobs.length, totalExact: true };
    const estimate = Math.round(plan[0]?.['QUERY PLAN'][0].Plan['Plan Rows'] ?? 0);
    return { jobs, next, total: Math.max(estimate, jobs.length), totalExact: false };
  }

  /** One row per (queue, status) with at least one job, by queue then lifecycle order. */
  async jobCounts(): Promise<JobCount[]> {
    const rows = await this.ctx.query<{ queue: string; status: JobCount['status']; count: string }>(
      'JobCounts',
      this.sql.JobCounts,
      [],
    );
    return rows.map((row) => ({
      queue: row.queue,
      status: row.status,
      count: toSafeInteger(row.count, 'count'),
    }));
  }

  async jobRescueExpired(p: JobRescueParams): Promise<JobRescueResult> {
    if (p.limit <= 0) return this.ctx.emptyAnswer({ rescued: 0, deadLettered: 0 });
    const rows = await this.ctx.query<{ rescued: number; dead_lettered: number }>(
      'JobRescueExpired',
      this.sql.JobRescueExpired,
      [
        p.limit,
        p.backoff.baseMs,
        p.backoff.capMs,
        LEASE_EXPIRED,
        this.ctx.pinnedNow(),
        this.ctx.notifyChannel,
      ],
    );
    return { rescued: rows[0]?.rescued ?? 0, deadLettered: rows[0]?.dead_lettered ?? 0 };
  }

  async jobPrune(p: JobPruneParams): Promise<number> {
    if (p.limit <= 0) return this.ctx.emptyAnswer(0);
    const rows = await this.ctx.query<{ pruned: number }>('JobPrune', this.sql.JobPrune, [
      p.olderThanMs,
      p.limit,
      this.ctx.pinnedNow(),
    ]);
    return rows[0]?.pruned ?? 0;
  }

  private async oneJob(name: string, text: string, values: unknown[]): Promise<Job | null> {
    const rows = await this.ctx.query<JobRow>(name, text, values);
    return rows[0] ? mapJob(rows[0]) : null;
  }
}

/** `text` as a literal inside a LIKE pattern: its `%`, `_` and backslash match only themselves. */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
