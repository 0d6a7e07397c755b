/**
 * The job records of the memory engine and the state transitions every job family shares: the
 * worker's side (MemoryJobs, memory-jobs.ts), the administration (MemoryJobAdmin,
 * memory-job-admin.ts), flows (memory-flows.ts, for which this store is the host) and steps.
 * Kept in one place so that a transition (a finish, a removal, a return to pending) and the
 * notifications it owes are written once, whichever family makes it.
 *
 * A job record is mutated in place; callers outside the engine only ever see deep copies
 * (`view`), and payloads and headers go through JSON on the way in, exactly as they would
 * through jsonb, so a program moving from memory to PostgreSQL sees the same values.
 *
 * Dedup keys are indexed lazily: `liveKeys` maps (queue, key) to the job that last took the key,
 * and an entry is trusted only while that job is unfinished (waiting, pending or processing).
 */
import { JOBS_TOPIC, JOB_FINISHED_TOPIC, finishedPayload, newJob, type JobSpec } from '../jobs.js';
import { MemoryFlows, type FlowHost } from './memory-flows.js';
import { dedupKey, isUnfinished, toJson, type JobRecord } from './memory-job-record.js';
import type { MemoryQueues } from './memory-queues.js';

export class MemoryJobStore implements FlowHost {
  /** Every job, in id order: ids only grow and a Map iterates in insertion order. */
  private readonly jobs = new Map<number, JobRecord>();
  private readonly liveKeys = new Map<string, number>();
  /** Jobs someone waits for (jobWatch): their finish is announced on `job-finished`. */
  private readonly waited = new Set<number>();
  private nextId = 1;
  /** The flow family: parents settled by their children's transitions (memory-flows.ts). */
  readonly flows: MemoryFlows;

  constructor(
    readonly now: () => Date,
    /** Announces claimable work on topic `jobs`, as the SQL of the PostgreSQL engine does inline. */
    private readonly publish: (topic: string, payload: string) => void,
    /** Each queue's flow control: a finish frees a capped queue's slot. */
    private readonly queues: MemoryQueues,
  ) {
    this.flows = new MemoryFlows(this);
  }

  /**
   * The stored record of job `id` itself, not a copy: the families change it in place, and the
   * step family (memory-steps.ts) checks a step's ownership and puts a sleeping job back to
   * pending in the same turn.
   */
  record(id: number): JobRecord | undefined {
    return this.jobs.get(id);
  }

  /** Every job record, in id order, for the families that read jobs (trends); not copies. */
  records(): IterableIterator<JobRecord> {
    return this.jobs.values();
  }

  has(id: number): boolean {
    return this.jobs.has(id);
  }

  insert(spec: JobSpec, now: Date, fields: Partial<JobRecord> = {}): JobRecord {
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
    this.takeKey(record);
    return record;
  }

  /** Deletes the job; a flow's parent or child settles as PostgreSQL's JobDelete settles it. */
  remove(r: JobRecord, now: Date, woken: Set<string>): void {
    this.jobs.delete(r.id);
    this.flows.deleted(r, now, woken);
  }

  /** Forgets a pruned job entirely: pruning settles nothing, as the PostgreSQL prune does not. */
  prune(r: JobRecord): void {
    this.jobs.delete(r.id);
    this.flows.forget(r.id);
    this.waited.delete(r.id);
  }

  /** Marks job `id` as waited for: its finish or deletion is announced on `job-finished`. */
  watch(id: number): void {
    this.waited.add(id);
  }

  /** Indexes `r` as the live holder of its (queue, key); a job without a key holds none. */
  takeKey(r: JobRecord): void {
    if (r.key !== null) this.liveKeys.set(dedupKey(r.queue, r.key), r.id);
  }

  liveByKey(queue: string, key: string): JobRecord | undefined {
    const id = this.liveKeys.get(dedupKey(queue, key));
    const r = id === undefined ? undefined : this.jobs.get(id);
    return r && isUnfinished(r) && r.queue === queue && r.key === key ? r : undefined;
  }

  /** Back to pending; claimedBy and claimedAt stay as the record of the last claim. */
  makePending(r: JobRecord, availableAt: Date, now: Date): void {
    Object.assign(r, { status: 'pending', availableAt, leaseExpiresAt: null, updatedAt: now });
  }

  /**
   * To a final status. A partition's next job may now run, or a capped queue's slot is free, so
   * its queue is woken.
   */
  finish(
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

  announce(queues: ReadonlySet<string>): void {
    for (const queue of queues) this.publish(JOBS_TOPIC, queue);
  }

  /**
   * One `job-finished` notification for the waited-for jobs among `ids`, none when there are
   * none, as the SQL's finishedNotified. The mark stays while the job exists (as the column
   * does), so a job retried and finished again is announced again.
   */
  announceFinished(ids: readonly number[]): void {
    const waited = ids.filter((id) => this.waited.has(id));
    for (const id of waited) if (!this.jobs.has(id)) this.waited.delete(id);
    if (waited.length > 0) this.publish(JOB_FINISHED_TOPIC, finishedPayload(waited));
  }
}

/** When a job enqueued (or replaced) by `spec` at `now` becomes claimable. */
export function availableAt(spec: JobSpec, now: Date): Date {
  return spec.runAt
    ? new Date(spec.runAt.getTime())
    : new Date(now.getTime() + Math.max(0, spec.delayMs ?? 0));
}
