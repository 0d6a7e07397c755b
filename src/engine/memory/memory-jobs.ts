/**
 * The job family in process, with the rules of src/engine/jobs.ts: a worker's side of a job
 * (enqueue, claim, renew, progress, complete, fail, hand back). What operators and maintenance
 * do to jobs is MemoryJobAdmin (memory-job-admin.ts); the records and the transitions both
 * share are MemoryJobStore (memory-job-store.ts). Each method runs to completion without
 * awaiting, so each is atomic like the one statement it mirrors, and a claim can never hand the
 * same job to two workers.
 */
import { UnsupportedError } from '../../core/errors.js';
import type { CallerTransaction } from '../types.js';
import { claimableJobs, explainFactsOf, roomOf, roundRobinByKey } from './memory-claim-limits.js';
import type { ExplainSources, MemoryQueues } from './memory-queues.js';
import { answerGroup, groupByKey, replaces } from '../enqueue-groups.js';
import { markLimited, type REPLACED_FIELDS } from '../jobs.js';
import type { MemoryJobTallies } from './memory-job-tallies.js';
import { availableAt, type MemoryJobStore } from './memory-job-store.js';
import {
  claimOrder,
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

export class MemoryJobs implements JobOperations {
  constructor(
    /** The job records and the transitions the job families share. */
    private readonly store: MemoryJobStore,
    /** Each queue's flow control, read by every claim. */
    private readonly queues: MemoryQueues,
    /** Where a job deleted as it completes leaves its events for the trends. */
    private readonly tallies: MemoryJobTallies,
  ) {}

  async jobEnqueue(p: JobEnqueueParams): Promise<EnqueueOutcome[]> {
    refuseTransaction(p.tx);
    const now = this.store.now();
    const woken = new Set<string>();
    const outcomes: EnqueueOutcome[] = [];
    for (const group of groupByKey(p.jobs))
      answerGroup(group, p.jobs, this.enqueueOne(group.spec, now, woken), outcomes);
    this.store.announce(woken);
    return outcomes;
  }

  /** One (queue, key) of an enqueue: created, replaced, or the live job answered as it is. */
  private enqueueOne(spec: JobSpec, now: Date, woken: Set<string>): EnqueueOutcome {
    const existing = spec.key == null ? undefined : this.store.liveByKey(spec.queue, spec.key);
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
    const record = this.store.insert(spec, now);
    woken.add(record.queue);
    return { job: view(record), created: true, replaced: false };
  }

  async jobClaimBatch(p: JobClaimParams): Promise<ClaimedJobs> {
    const now = this.store.now();
    const leaseExpiresAt = new Date(now.getTime() + p.leaseTtlMs);
    const queues = new Set(p.queues);
    const types = p.types === undefined ? undefined : new Set(p.types);
    // JobClaimParams.availableWithinMs as the SQL's AVAILABLE_FROM: no bound, -Infinity.
    const availableFrom = now.getTime() - (p.availableWithinMs ?? Number.POSITIVE_INFINITY);
    const claimable = claimableJobs(this.store.records(), queues, now, (queue) => {
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
      const room = Math.min(roomOf(state, this.store.records(), queue, now), p.limit);
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
    const job = this.store.record(id);
    if (!job) return undefined;
    const facts = explainFactsOf(this.store.records(), job, this.store.now())!;
    return { ...facts, childrenLeft: this.store.flows.childrenLeft(id) };
  }

  async jobRenewLeases(p: JobRenewParams): Promise<JobRenewed[]> {
    const now = this.store.now();
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
    const now = this.store.now();
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
    const now = this.store.now();
    const woken = new Set<string>();
    const accepted: number[] = [];
    for (const completion of p.jobs) {
      const r = this.owned(p.workerId, completion);
      if (!r) continue;
      r.result = toJson(completion.result);
      this.store.finish(r, 'completed', now, woken);
      if (p.remove === true) {
        this.tallies.countRemoved(r, now);
        this.store.remove(r, now, woken);
      }
      accepted.push(r.id);
    }
    this.store.announce(woken);
    this.store.announceFinished(accepted);
    return accepted;
  }

  async jobFail(p: JobFailParams): Promise<JobFailOutcome[]> {
    const now = this.store.now();
    const woken = new Set<string>();
    const outcomes: JobFailOutcome[] = [];
    const dead: number[] = [];
    for (const failure of p.jobs) {
      const r = this.owned(p.workerId, failure);
      if (!r) continue;
      recordError(r, failure.error, now);
      if (failure.final === true || r.attempts >= r.maxAttempts) {
        this.store.finish(r, 'dead', now, woken);
        outcomes.push({ id: r.id, outcome: 'dead' });
        dead.push(r.id);
        continue;
      }
      const delayMs = Math.max(0, failure.retryDelayMs);
      this.store.makePending(r, new Date(now.getTime() + delayMs), now);
      if (delayMs === 0) woken.add(r.queue);
      outcomes.push({ id: r.id, outcome: 'retried' });
    }
    this.store.announce(woken);
    this.store.announceFinished(dead);
    return outcomes;
  }

  async jobHandBack(p: { workerId: string; jobs: readonly JobLeaseRef[] }): Promise<number[]> {
    const now = this.store.now();
    const woken = new Set<string>();
    const handedBack: number[] = [];
    for (const ref of p.jobs) {
      const r = this.owned(p.workerId, ref);
      if (!r) continue;
      this.store.makePending(r, now, now);
      r.attempts = Math.max(0, r.attempts - 1);
      woken.add(r.queue);
      handedBack.push(r.id);
    }
    this.store.announce(woken);
    return handedBack;
  }

  /** The job if `workerId` holds it under this generation; lease expiry is not checked here. */
  private owned(workerId: string, ref: JobLeaseRef): JobRecord | undefined {
    const r = this.store.record(ref.id);
    return r?.status === 'processing' && r.claimedBy === workerId && r.generation === ref.generation
      ? r
      : undefined;
  }
}

function refuseTransaction(tx: CallerTransaction | undefined): void {
  if (tx) throw new UnsupportedError('the memory engine cannot join a caller transaction');
}
