/**
 * The job administration family in process, with the rules of src/engine/job-admin.ts: what
 * operators, the API and maintenance do to jobs (cancel, retry, delete, one by id or a batch by
 * match; rescue; prune) and every read of jobs. The records and the transitions it shares with
 * the worker's side (memory-jobs.ts) are MemoryJobStore's (memory-job-store.ts). Each method
 * runs to completion without awaiting, so each is atomic like the statement it mirrors.
 */
import { backoffDelay } from '../../core/backoff.js';
import { ConflictError } from '../../core/errors.js';
import { JOB_STATUSES, type Job } from '../../core/types.js';
import { LEASE_EXPIRED, SCAN_FACTOR } from '../job-admin.js';
import type {
  JobAdminOperations,
  JobBatchOutcome,
  JobBatchParams,
  JobMatch,
  JobCount,
  JobListParams,
  JobSearchPage,
  JobSearchParams,
  JobPruneParams,
  JobRescueParams,
  JobRescueResult,
} from '../job-admin.js';
import { matchesFields, searchJobs } from './memory-job-search.js';
import { isUnfinished, leaseEnd, recordError, view, type JobRecord } from './memory-job-record.js';
import type { MemoryJobStore } from './memory-job-store.js';

export class MemoryJobAdmin implements JobAdminOperations {
  constructor(
    /** The job records and the transitions the job families share. */
    private readonly store: MemoryJobStore,
  ) {}

  async jobCancel(p: { id: number }): Promise<Job | null> {
    const r = this.store.record(p.id);
    if (!r) return null;
    if (isUnfinished(r)) {
      const woken = new Set<string>();
      this.store.finish(r, 'cancelled', this.store.now(), woken);
      this.store.announce(woken);
      this.store.announceFinished([r.id]);
    }
    return view(r);
  }

  async jobRetry(p: { id: number }): Promise<Job | null> {
    const r = this.store.record(p.id);
    if (!r || isUnfinished(r)) return null;
    if (r.key !== null && this.store.liveByKey(r.queue, r.key)) {
      throw new ConflictError(`a live job of queue "${r.queue}" already has key "${r.key}"`, {
        id: r.id,
        queue: r.queue,
        key: r.key,
      });
    }
    const now = this.store.now();
    this.store.makePending(r, now, now);
    Object.assign(r, { attempts: 0, result: null, finishedAt: null });
    this.store.takeKey(r);
    this.store.announce(new Set([r.queue]));
    return view(r);
  }

  async jobDelete(p: { id: number }): Promise<boolean> {
    const r = this.store.record(p.id);
    if (!r || r.status === 'processing') return false;
    const woken = new Set<string>();
    this.store.remove(r, this.store.now(), woken);
    // A pending partition head leaving lets the next job of its partition run.
    if (r.status === 'pending' && r.partitionKey !== null) woken.add(r.queue);
    this.store.announce(woken);
    this.store.announceFinished([r.id]);
    return true;
  }

  /** Newest first, so of several matching jobs sharing a key the newest takes it, as in SQL. */
  async jobRetryMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    const { batch, next } = this.matchingBatch(p);
    const now = this.store.now();
    let changed = 0;
    for (const r of batch) {
      if (isUnfinished(r) || (r.key !== null && this.store.liveByKey(r.queue, r.key))) continue;
      this.store.makePending(r, now, now);
      Object.assign(r, { attempts: 0, result: null, finishedAt: null });
      this.store.takeKey(r);
      changed++;
    }
    if (changed > 0) this.store.announce(new Set([p.match.queue]));
    return { changed, next };
  }

  async jobCancelMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    const { batch, next } = this.matchingBatch(p);
    const now = this.store.now();
    const woken = new Set<string>();
    let changed = 0;
    const finished: number[] = [];
    for (const r of batch) {
      if (!isUnfinished(r)) continue;
      this.store.finish(r, 'cancelled', now, woken);
      finished.push(r.id);
      changed++;
    }
    this.store.announce(woken);
    this.store.announceFinished(finished);
    return { changed, next };
  }

  async jobDeleteMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    const { batch, next } = this.matchingBatch(p);
    const woken = new Set<string>();
    let changed = 0;
    const gone: number[] = [];
    const now = this.store.now();
    for (const r of batch) {
      if (r.status === 'processing' || !this.store.has(r.id)) continue;
      this.store.remove(r, now, woken);
      gone.push(r.id);
      // A pending partition head leaving lets the next job of its partition run.
      if (r.status === 'pending' && r.partitionKey !== null) woken.add(r.queue);
      changed++;
    }
    this.store.announce(woken);
    this.store.announceFinished(gone);
    return { changed, next };
  }

  /**
   * The `limit` newest matching jobs among the SCAN_FACTOR x `limit` jobs (of any queue) below
   * `beforeId`, and where the next batch starts: as the SQL (job-admin-queries.ts, matchingBatch).
   */
  private matchingBatch(p: JobBatchParams): { batch: JobRecord[]; next: number | null } {
    const batch: JobRecord[] = [];
    if (p.limit <= 0) return { batch, next: null };
    const records = [...this.store.records()];
    const scanLimit = p.limit * SCAN_FACTOR;
    let scanned = 0;
    let lowest: number | null = null;
    for (let i = records.length - 1; i >= 0 && scanned < scanLimit; i--) {
      const r = records[i]!;
      if (p.beforeId !== undefined && r.id >= p.beforeId) continue;
      scanned++;
      lowest = r.id;
      if (!matches(r, p.match)) continue;
      batch.push(r);
      if (batch.length === p.limit) return { batch, next: r.id };
    }
    return { batch, next: scanned === scanLimit ? lowest : null };
  }

  async jobGet(p: { id: number }): Promise<Job | null> {
    const r = this.store.record(p.id);
    return r ? view(r) : null;
  }

  async jobWatch(p: { id: number }): Promise<Job | null> {
    const r = this.store.record(p.id);
    if (!r) return null;
    this.store.watch(r.id);
    return view(r);
  }

  /** Newest first (id descending), as `GET /api/jobs` and the dashboard present them. */
  async jobList(p: JobListParams): Promise<Job[]> {
    const matches = [...this.store.records()].filter(
      (r) =>
        (p.queue === undefined || r.queue === p.queue) &&
        (p.status === undefined || r.status === p.status) &&
        (p.partitionKey === undefined || r.partitionKey === p.partitionKey),
    );
    return matches
      .reverse()
      .slice(p.offset, p.offset + p.limit)
      .map(view);
  }

  /** One page of the explorer's search (memory-job-search.ts). */
  async jobSearch(p: JobSearchParams): Promise<JobSearchPage> {
    return searchJobs([...this.store.records()], p, view);
  }

  /** One row per (queue, status) with at least one job, by queue then lifecycle order. */
  async jobCounts(): Promise<JobCount[]> {
    const counts = new Map<string, Map<string, number>>();
    for (const r of this.store.records()) {
      let byStatus = counts.get(r.queue);
      if (!byStatus) counts.set(r.queue, (byStatus = new Map()));
      byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    }
    return [...counts.keys()].sort().flatMap((queue) =>
      JOB_STATUSES.flatMap((status) => {
        const count = counts.get(queue)?.get(status) ?? 0;
        return count > 0 ? [{ queue, status, count }] : [];
      }),
    );
  }

  async jobRescueExpired(p: JobRescueParams): Promise<JobRescueResult> {
    const now = this.store.now();
    const expired = [...this.store.records()]
      .filter((r) => r.status === 'processing' && leaseEnd(r) <= now.getTime())
      .sort((a, b) => leaseEnd(a) - leaseEnd(b) || a.id - b.id)
      .slice(0, Math.max(0, p.limit));
    const woken = new Set<string>();
    const dead: number[] = [];
    let rescued = 0;
    for (const r of expired) {
      recordError(r, LEASE_EXPIRED, now);
      if (r.attempts >= r.maxAttempts) {
        this.store.finish(r, 'dead', now, woken);
        dead.push(r.id);
        continue;
      }
      const delayMs = backoffDelay(p.backoff, r.attempts);
      this.store.makePending(r, new Date(now.getTime() + delayMs), now);
      if (delayMs === 0) woken.add(r.queue);
      rescued++;
    }
    this.store.announce(woken);
    this.store.announceFinished(dead);
    return { rescued, deadLettered: dead.length };
  }

  async jobPrune(p: JobPruneParams): Promise<number> {
    const cutoff = this.store.now().getTime() - p.olderThanMs;
    const old = [...this.store.records()]
      .filter(
        (r) =>
          !isUnfinished(r) &&
          r.finishedAt !== null &&
          r.finishedAt.getTime() < cutoff &&
          !this.parentWaits(r),
      )
      .sort(
        (a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0) || a.id - b.id,
      )
      .slice(0, Math.max(0, p.limit));
    for (const r of old) this.store.prune(r);
    return old.length;
  }

  /** A child whose parent still waits is kept from pruning: the parent reads its result. */
  private parentWaits(r: JobRecord): boolean {
    return r.parentId !== null && this.store.record(r.parentId)?.status === 'waiting';
  }
}

function matches(r: JobRecord, m: JobMatch): boolean {
  return r.queue === m.queue && m.statuses.includes(r.status) && matchesFields(r, m);
}
