/**
 * The job family in process, with the rules of src/engine/jobs.ts. Each method runs to
 * completion without awaiting, so each is atomic like the one statement it mirrors, and a claim
 * can never hand the same job to two workers.
 *
 * A job record is mutated in place; callers only ever see deep copies (`view`), and payloads,
 * headers and results go through JSON on the way in, exactly as they would through jsonb, so a
 * program moving from memory to PostgreSQL sees the same values.
 *
 * Dedup keys are indexed lazily: `liveKeys` maps (queue, key) to the job that last took the key,
 * and an entry is trusted only while that job is unfinished (waiting, pending or processing).
 */
import { backoffDelay } from '../../core/backoff.js';
import { ConflictError, UnsupportedError } from '../../core/errors.js';
import { JOB_STATUSES, type Job } from '../../core/types.js';
import type { CallerTransaction } from '../types.js';
import { claimableJobs, explainFactsOf, roomOf, roundRobinByKey } from './memory-claim-limits.js';
import type { ExplainSources, MemoryQueues } from './memory-queues.js';
import { answerGroup, groupByKey, replaces } from '../enqueue-groups.js';
import {
  JOBS_TOPIC,
  JOB_FINISHED_TOPIC,
  markLimited,
  finishedPayload,
  newJob,
  type REPLACED_FIELDS,
} from '../jobs.js';
import { SCAN_FACTOR } from '../job-admin.js';
import { MemoryFlows } from './memory-flows.js';
import type { MemoryJobTallies } from './memory-job-tallies.js';
import { matchesFields, searchJobs } from './memory-job-search.js';
import {
  claimOrder,
  dedupKey,
  isUnfinished,
  leaseEnd,
  recordError,
  toJson,
  view,
  type JobRecord,
} from './memory-job-record.js';
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
  JobSpec,
} from '../jobs.js';
import type {
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

/** The error recorded when the rescuer takes a job back from a silent worker. */
const LEASE_EXPIRED = 'lease expired: the worker stopped renewing';

export class MemoryJobs implements JobOperations {
  /** Every job, in id order: ids only grow and a Map iterates in insertion order. */
  private readonly jobs = new Map<number, JobRecord>();
  private readonly liveKeys = new Map<string, number>();
  /** Jobs someone waits for (jobWatch): their finish is announced on `job-finished`. */
  private readonly waited = new Set<number>();
  private nextId = 1;
  /** The flow family: parents settled by their children's transitions (memory-flows.ts). */
  readonly flows: MemoryFlows;

  constructor(
    private readonly now: () => Date,
    /** Announces claimable work on topic `jobs`, as the SQL of the PostgreSQL engine does inline. */
    private readonly publish: (topic: string, payload: string) => void,
    /** Each queue's flow control, read by every claim. */
    private readonly queues: MemoryQueues,
    /** Where a job deleted as it completes leaves its events for the trends. */
    private readonly tallies: MemoryJobTallies,
  ) {
    this.flows = new MemoryFlows({
      now,
      record: (id) => this.jobs.get(id),
      records: () => this.jobs.values(),
      liveByKey: (queue, key) => this.liveByKey(queue, key),
      insert: (spec, at, fields) => this.insert(spec, at, fields),
      finish: (r, status, at, woken) => this.finish(r, status, at, woken),
      announce: (queues) => this.announce(queues),
      announceFinished: (ids) => this.announceFinished(ids),
    });
  }

  /** Every job record, in id order, for the families that read jobs (trends); not copies. */
  records(): IterableIterator<JobRecord> {
    return this.jobs.values();
  }

  async jobEnqueue(p: JobEnqueueParams): Promise<EnqueueOutcome[]> {
    refuseTransaction(p.tx);
    const now = this.now();
    const woken = new Set<string>();
    const outcomes: EnqueueOutcome[] = [];
    for (const group of groupByKey(p.jobs))
      answerGroup(group, p.jobs, this.enqueueOne(group.spec, now, woken), outcomes);
    this.announce(woken);
    return outcomes;
  }

  /** One (queue, key) of an enqueue: created, replaced, or the live job answered as it is. */
  private enqueueOne(spec: JobSpec, now: Date, woken: Set<string>): EnqueueOutcome {
    const existing = spec.key == null ? undefined : this.liveByKey(spec.queue, spec.key);
    if (existing && replaces(spec) && existing.status === 'pending') {
      Object.assign(existing, {
        type: spec.type ?? null,
        payload: toJson(spec.payload),
        headers: toJson(spec.headers ?? {}) as Record<string, string>,
        priority: spec.priority ?? 0,
        maxAttempts: spec.maxAttempts,
        timeoutMs: spec.timeoutMs ?? null,
        availableAt: availableAt(spec, now),
        updatedAt: now,
      } satisfies Pick<JobRecord, (typeof REPLACED_FIELDS)[number] | 'updatedAt'>);
      if (existing.availableAt.getTime() <= now.getTime()) woken.add(existing.queue);
      return { job: view(existing), created: false, replaced: true };
    }
    if (existing && !(spec.debounce === true && existing.status === 'processing'))
      return { job: view(existing), created: false, replaced: false };
    // A debounce meeting a running job takes its key over: the run goes on untouched but for
    // its key, and the new job is the one run after it (decision 0252).
    if (existing) Object.assign(existing, { key: null, updatedAt: now });
    const record = this.insert(spec, now);
    woken.add(record.queue);
    return { job: view(record), created: true, replaced: false };
  }

  async jobClaimBatch(p: JobClaimParams): Promise<ClaimedJobs> {
    const now = this.now();
    const leaseExpiresAt = new Date(now.getTime() + p.leaseTtlMs);
    const queues = new Set(p.queues);
    const types = p.types === undefined ? undefined : new Set(p.types);
    // JobClaimParams.availableWithinMs as the SQL's AVAILABLE_FROM: no bound, -Infinity.
    const availableFrom = now.getTime() - (p.availableWithinMs ?? Number.POSITIVE_INFINITY);
    const claimable = claimableJobs(this.jobs.values(), queues, now, (queue) => {
      const state = this.queues.state(queue);
      return state ? state.settings.perKeyConcurrency : 1;
    }).filter(
      (r) =>
        (types === undefined || (r.type !== null && types.has(r.type))) &&
        r.availableAt.getTime() >= availableFrom,
    );
    // As the SQL does: each queue's picks in its own order up to its room, then the oldest of
    // them all up to the limit.
    const picks: JobRecord[] = [];
    for (const queue of queues) {
      const own = claimable.filter((r) => r.queue === queue).sort(claimOrder);
      const state = this.queues.state(queue);
      const room = Math.min(roomOf(state, this.jobs.values(), queue, now), p.limit);
      const ordered = state?.settings.fairness === 'key' ? roundRobinByKey(own) : own;
      picks.push(...ordered.slice(0, Math.max(0, room)));
    }
    const taken = picks.sort(claimOrder).slice(0, Math.max(0, p.limit));
    // Starts are recorded only while a rate is set, as the SQL's window is.
    for (const r of taken) {
      const state = this.queues.state(r.queue);
      if (state?.settings.rate) state.starts.push(now.getTime());
    }
    const limited = [...queues].some((queue) => this.queues.state(queue) !== undefined);
    const jobs = taken.map((r) => {
      Object.assign(r, {
        status: 'processing',
        attempts: r.attempts + 1,
        generation: r.generation + 1,
        claimedBy: p.workerId,
        claimedAt: now,
        leaseExpiresAt,
        updatedAt: now,
        progress: null, // progress belongs to an attempt: a new one starts without
        renewals: 0,
        renewedAt: null,
      });
      return view(r);
    });
    return limited ? markLimited(jobs) : jobs;
  }

  /** The facts about job `id` that explain.ts needs from this family (MemoryQueues.jobExplain). */
  explainFacts(id: number): ReturnType<ExplainSources['jobFacts']> {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    const facts = explainFactsOf(this.jobs.values(), job, this.now())!;
    return { ...facts, childrenLeft: this.flows.childrenLeft(id) };
  }

  async jobRenewLeases(p: JobRenewParams): Promise<JobRenewed[]> {
    const now = this.now();
    const leaseExpiresAt = new Date(now.getTime() + p.leaseTtlMs);
    const renewed: JobRenewed[] = [];
    const seen = new Set<number>();
    for (const ref of p.jobs) {
      const r = this.owned(p.workerId, ref);
      if (!r || seen.has(r.id) || (r.leaseExpiresAt?.getTime() ?? 0) <= now.getTime()) continue;
      seen.add(r.id);
      Object.assign(r, {
        leaseExpiresAt,
        updatedAt: now,
        renewals: r.renewals + 1,
        renewedAt: new Date(now.getTime()),
      });
      renewed.push({ id: r.id, leaseExpiresAt: new Date(leaseExpiresAt.getTime()) });
    }
    return renewed;
  }

  async jobProgress(p: JobProgressParams): Promise<number[]> {
    const now = this.now();
    const accepted = new Set<number>();
    for (const report of p.jobs) {
      const r = this.owned(p.workerId, report);
      if (!r || accepted.has(r.id) || leaseEnd(r) <= now.getTime()) continue;
      Object.assign(r, { progress: toJson(report.progress), updatedAt: now });
      accepted.add(r.id);
    }
    return [...accepted];
  }

  async jobComplete(p: JobCompleteParams): Promise<number[]> {
    refuseTransaction(p.tx);
    const now = this.now();
    const woken = new Set<string>();
    const accepted: number[] = [];
    for (const completion of p.jobs) {
      const r = this.owned(p.workerId, completion);
      if (!r) continue;
      r.result = toJson(completion.result);
      this.finish(r, 'completed', now, woken);
      if (p.remove === true) {
        this.tallies.countRemoved(r, now);
        this.remove(r, now, woken);
      }
      accepted.push(r.id);
    }
    this.announce(woken);
    this.announceFinished(accepted);
    return accepted;
  }

  async jobFail(p: JobFailParams): Promise<JobFailOutcome[]> {
    const now = this.now();
    const woken = new Set<string>();
    const outcomes: JobFailOutcome[] = [];
    const dead: number[] = [];
    for (const failure of p.jobs) {
      const r = this.owned(p.workerId, failure);
      if (!r) continue;
      recordError(r, failure.error, now);
      if (failure.final === true || r.attempts >= r.maxAttempts) {
        this.finish(r, 'dead', now, woken);
        outcomes.push({ id: r.id, outcome: 'dead' });
        dead.push(r.id);
        continue;
      }
      const delayMs = Math.max(0, failure.retryDelayMs);
      this.makePending(r, new Date(now.getTime() + delayMs), now);
      if (delayMs === 0) woken.add(r.queue);
      outcomes.push({ id: r.id, outcome: 'retried' });
    }
    this.announce(woken);
    this.announceFinished(dead);
    return outcomes;
  }

  async jobHandBack(p: { workerId: string; jobs: readonly JobLeaseRef[] }): Promise<number[]> {
    const now = this.now();
    const woken = new Set<string>();
    const handedBack: number[] = [];
    for (const ref of p.jobs) {
      const r = this.owned(p.workerId, ref);
      if (!r) continue;
      this.makePending(r, now, now);
      r.attempts = Math.max(0, r.attempts - 1);
      woken.add(r.queue);
      handedBack.push(r.id);
    }
    this.announce(woken);
    return handedBack;
  }

  async jobCancel(p: { id: number }): Promise<Job | null> {
    const r = this.jobs.get(p.id);
    if (!r) return null;
    if (isUnfinished(r)) {
      const woken = new Set<string>();
      this.finish(r, 'cancelled', this.now(), woken);
      this.announce(woken);
      this.announceFinished([r.id]);
    }
    return view(r);
  }

  async jobRetry(p: { id: number }): Promise<Job | null> {
    const r = this.jobs.get(p.id);
    if (!r || isUnfinished(r)) return null;
    if (r.key !== null && this.liveByKey(r.queue, r.key)) {
      throw new ConflictError(`a live job of queue "${r.queue}" already has key "${r.key}"`, {
        id: r.id,
        queue: r.queue,
        key: r.key,
      });
    }
    const now = this.now();
    this.makePending(r, now, now);
    Object.assign(r, { attempts: 0, result: null, finishedAt: null });
    if (r.key !== null) this.liveKeys.set(dedupKey(r.queue, r.key), r.id);
    this.announce(new Set([r.queue]));
    return view(r);
  }

  async jobDelete(p: { id: number }): Promise<boolean> {
    const r = this.jobs.get(p.id);
    if (!r || r.status === 'processing') return false;
    const woken = new Set<string>();
    this.remove(r, this.now(), woken);
    // A pending partition head leaving lets the next job of its partition run.
    if (r.status === 'pending' && r.partitionKey !== null) woken.add(r.queue);
    this.announce(woken);
    this.announceFinished([r.id]);
    return true;
  }

  /** Newest first, so of several matching jobs sharing a key the newest takes it, as in SQL. */
  async jobRetryMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    const { batch, next } = this.matchingBatch(p);
    const now = this.now();
    let changed = 0;
    for (const r of batch) {
      if (isUnfinished(r) || (r.key !== null && this.liveByKey(r.queue, r.key))) continue;
      this.makePending(r, now, now);
      Object.assign(r, { attempts: 0, result: null, finishedAt: null });
      if (r.key !== null) this.liveKeys.set(dedupKey(r.queue, r.key), r.id);
      changed++;
    }
    if (changed > 0) this.announce(new Set([p.match.queue]));
    return { changed, next };
  }

  async jobCancelMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    const { batch, next } = this.matchingBatch(p);
    const now = this.now();
    const woken = new Set<string>();
    let changed = 0;
    const finished: number[] = [];
    for (const r of batch) {
      if (!isUnfinished(r)) continue;
      this.finish(r, 'cancelled', now, woken);
      finished.push(r.id);
      changed++;
    }
    this.announce(woken);
    this.announceFinished(finished);
    return { changed, next };
  }

  async jobDeleteMatching(p: JobBatchParams): Promise<JobBatchOutcome> {
    const { batch, next } = this.matchingBatch(p);
    const woken = new Set<string>();
    let changed = 0;
    const gone: number[] = [];
    const now = this.now();
    for (const r of batch) {
      if (r.status === 'processing' || !this.jobs.has(r.id)) continue;
      this.remove(r, now, woken);
      gone.push(r.id);
      // A pending partition head leaving lets the next job of its partition run.
      if (r.status === 'pending' && r.partitionKey !== null) woken.add(r.queue);
      changed++;
    }
    this.announce(woken);
    this.announceFinished(gone);
    return { changed, next };
  }

  /**
   * The `limit` newest matching jobs among the SCAN_FACTOR x `limit` jobs (of any queue) below
   * `beforeId`, and where the next batch starts: as the SQL (job-queries.ts, matchingBatch).
   */
  private matchingBatch(p: JobBatchParams): { batch: JobRecord[]; next: number | null } {
    const batch: JobRecord[] = [];
    if (p.limit <= 0) return { batch, next: null };
    const records = [...this.jobs.values()];
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
    const r = this.jobs.get(p.id);
    return r ? view(r) : null;
  }

  async jobWatch(p: { id: number }): Promise<Job | null> {
    const r = this.jobs.get(p.id);
    if (!r) return null;
    this.waited.add(r.id);
    return view(r);
  }

  /** Newest first (id descending), as `GET /api/jobs` and the dashboard present them. */
  async jobList(p: JobListParams): Promise<Job[]> {
    const matches = [...this.jobs.values()].filter(
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
    return searchJobs([...this.jobs.values()], p, view);
  }

  /** One row per (queue, status) with at least one job, by queue then lifecycle order. */
  async jobCounts(): Promise<JobCount[]> {
    const counts = new Map<string, Map<string, number>>();
    for (const r of this.jobs.values()) {
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
    const now = this.now();
    const expired = [...this.jobs.values()]
      .filter((r) => r.status === 'processing' && leaseEnd(r) <= now.getTime())
      .sort((a, b) => leaseEnd(a) - leaseEnd(b) || a.id - b.id)
      .slice(0, Math.max(0, p.limit));
    const woken = new Set<string>();
    const dead: number[] = [];
    let rescued = 0;
    for (const r of expired) {
      recordError(r, LEASE_EXPIRED, now);
      if (r.attempts >= r.maxAttempts) {
        this.finish(r, 'dead', now, woken);
        dead.push(r.id);
        continue;
      }
      const delayMs = backoffDelay(p.backoff, r.attempts);
      this.makePending(r, new Date(now.getTime() + delayMs), now);
      if (delayMs === 0) woken.add(r.queue);
      rescued++;
    }
    this.announce(woken);
    this.announceFinished(dead);
    return { rescued, deadLettered: dead.length };
  }

  async jobPrune(p: JobPruneParams): Promise<number> {
    const cutoff = this.now().getTime() - p.olderThanMs;
    const old = [...this.jobs.values()]
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
    for (const r of old) {
      this.jobs.delete(r.id);
      this.flows.forget(r.id);
      this.waited.delete(r.id);
    }
    return old.length;
  }

  /** A child whose parent still waits is kept from pruning: the parent reads its result. */
  private parentWaits(r: JobRecord): boolean {
    return r.parentId !== null && this.jobs.get(r.parentId)?.status === 'waiting';
  }

  /** Deletes the job; a flow's parent or child settles as PostgreSQL's JobDelete settles it. */
  private remove(r: JobRecord, now: Date, woken: Set<string>): void {
    this.jobs.delete(r.id);
    this.flows.deleted(r, now, woken);
  }

  private insert(spec: JobSpec, now: Date, fields: Partial<JobRecord> = {}): JobRecord {
    // Copies of the payload and headers: stored state never shares an object with a caller.
    const record: JobRecord = newJob(
      {
        ...spec,
        payload: toJson(spec.payload),
        headers: toJson(spec.headers ?? {}) as Record<string, string>,
      },
      this.nextId++,
      now,
      availableAt(spec, now),
    );
    Object.assign(record, fields);
    this.jobs.set(record.id, record);
    if (record.key !== null) this.liveKeys.set(dedupKey(record.queue, record.key), record.id);
    return record;
  }

  /**
   * The stored record of job `id` itself, not a copy: for the step family (memory-steps.ts),
   * which checks a step's ownership and puts a sleeping job back to pending in the same turn.
   */
  record(id: number): JobRecord | undefined {
    return this.jobs.get(id);
  }

  /** The job if `workerId` holds it under this generation; lease expiry is not checked here. */
  private owned(workerId: string, ref: JobLeaseRef): JobRecord | undefined {
    const r = this.jobs.get(ref.id);
    return r?.status === 'processing' && r.claimedBy === workerId && r.generation === ref.generation
      ? r
      : undefined;
  }

  private liveByKey(queue: string, key: string): JobRecord | undefined {
    const id = this.liveKeys.get(dedupKey(queue, key));
    const r = id === undefined ? undefined : this.jobs.get(id);
    return r && isUnfinished(r) && r.queue === queue && r.key === key ? r : undefined;
  }

  /** Back to pending; claimedBy and claimedAt stay as the record of the last claim. */
  private makePending(r: JobRecord, availableAt: Date, now: Date): void {
    Object.assign(r, { status: 'pending', availableAt, leaseExpiresAt: null, updatedAt: now });
  }

  /**
   * To a final status. A partition's next job may now run, or a capped queue's slot is free, so
   * its queue is woken.
   */
  private finish(
    r: JobRecord,
    status: 'completed' | 'dead' | 'cancelled',
    now: Date,
    woken: Set<string>,
  ): void {
    const freedSlot =
      r.status === 'processing' && this.queues.state(r.queue)?.settings.concurrency != null;
    Object.assign(r, { status, leaseExpiresAt: null, finishedAt: now, updatedAt: now });
    if (r.partitionKey !== null || freedSlot) woken.add(r.queue);
    this.flows.finished(r, now, woken);
  }

  private announce(queues: ReadonlySet<string>): void {
    for (const queue of queues) this.publish(JOBS_TOPIC, queue);
  }

  /**
   * One `job-finished` notification for the waited-for jobs among `ids`, none when there are
   * none, as the SQL's finishedNotified. The mark stays while the job exists (as the column
   * does), so a job retried and finished again is announced again.
   */
  private announceFinished(ids: readonly number[]): void {
    const waited = ids.filter((id) => this.waited.has(id));
    for (const id of waited) if (!this.jobs.has(id)) this.waited.delete(id);
    if (waited.length > 0) this.publish(JOB_FINISHED_TOPIC, finishedPayload(waited));
  }
}

/** When a job enqueued (or replaced) by `spec` at `now` becomes claimable. */
function availableAt(spec: JobSpec, now: Date): Date {
  return spec.runAt
    ? new Date(spec.runAt.getTime())
    : new Date(now.getTime() + Math.max(0, spec.delayMs ?? 0));
}

function matches(r: JobRecord, m: JobMatch): boolean {
  return r.queue === m.queue && m.statuses.includes(r.status) && matchesFields(r, m);
}

function refuseTransaction(tx: CallerTransaction | undefined): void {
  if (tx) throw new UnsupportedError('the memory engine cannot join a caller transaction');
}
