/**
 * The step family in process (steps.ts, decision 0254), "with its own transactions": a step
 * function runs with a fresh MemoryTransaction, whose `onCommit` effects are its writes. When
 * the function has returned, ownership is checked on the engine's clock and the step recorded
 * and its effects run in one synchronous turn, which is atomic in JavaScript as the guarded
 * INSERT and COMMIT are on PostgreSQL; a step that finds the job gone from under it drops its
 * effects.
 *
 * Steps are kept per job id. A deleted job's steps go with it: `jobSteps` answers only for a
 * job that exists, and the records of deleted jobs are swept whenever the map has doubled since
 * the last sweep (ids are never reused, so a leftover is never mistaken for another job's).
 */
import { UnsupportedError } from '../../core/errors.js';
import type { JobStep } from '../../core/types.js';
import { JOBS_TOPIC, type JobLeaseRef } from '../jobs.js';
import {
  CommitEffects,
  type JobSleepParams,
  type JobStepOutcome,
  type JobStepRunParams,
  type StepOperations,
  type StepTransaction,
} from '../steps.js';
import { toJson, type JobRecord } from './memory-job-record.js';
import type { MemoryJobStore } from './memory-job-store.js';

/**
 * The transaction a memory step function runs in: no SQL (`query` rejects), and `onCommit`
 * effects that run only if the step commits. Write "through the transaction" by registering
 * the write as an effect.
 */
export class MemoryTransaction implements StepTransaction {
  constructor(private readonly effects: CommitEffects = new CommitEffects()) {}

  query(): Promise<never> {
    return Promise.reject(new UnsupportedError('the memory engine runs no SQL'));
  }

  onCommit(effect: () => void): void {
    this.effects.add(effect);
  }
}

interface StepRecord {
  readonly name: string;
  readonly value: unknown;
  readonly generation: number;
  readonly recordedAt: Date;
}

export class MemorySteps implements StepOperations {
  /** Each job's steps in recording order. */
  private readonly steps = new Map<number, StepRecord[]>();
  /** The map's size after the last sweep of deleted jobs' steps. */
  private sweptAt = 0;

  constructor(
    private readonly now: () => Date,
    private readonly jobs: MemoryJobStore,
    private readonly publish: (topic: string, payload: string) => void,
  ) {}

  async jobSteps(p: { id: number }): Promise<JobStep[]> {
    if (!this.jobs.record(p.id)) {
      this.steps.delete(p.id);
      return [];
    }
    return (this.steps.get(p.id) ?? []).map((s) => ({
      name: s.name,
      value: structuredClone(s.value),
      generation: s.generation,
      recordedAt: new Date(s.recordedAt.getTime()),
    }));
  }

  async jobStepRun(p: JobStepRunParams): Promise<JobStepOutcome> {
    const effects = new CommitEffects();
    let value: unknown;
    try {
      value = toJson(await p.body(new MemoryTransaction(effects)));
    } catch (error) {
      effects.discard();
      throw error;
    }
    effects.seal();
    // From here to the end of the record: one synchronous turn.
    const now = this.now();
    const r = this.held(p.workerId, p.ref, now);
    if (!r || this.find(r.id, p.name)) {
      effects.discard();
      return { recorded: false };
    }
    this.add(r, p.name, value, now);
    effects.commit();
    return { recorded: true, value: structuredClone(value), recordedAt: new Date(now.getTime()) };
  }

  async jobSleep(p: JobSleepParams): Promise<{ until: Date } | null> {
    const now = this.now();
    const r = this.held(p.workerId, p.ref, now);
    if (!r) return null;
    const earlier = this.find(r.id, p.name);
    // To the millisecond, as PostgreSQL keeps it; a sleep already recorded keeps its instant.
    const until =
      earlier !== undefined
        ? new Date(earlier.value as string)
        : new Date(now.getTime() + Math.max(0, Math.round(p.delayMs)));
    Object.assign(r, {
      status: 'pending',
      availableAt: until,
      attempts: Math.max(0, r.attempts - 1),
      leaseExpiresAt: null,
      updatedAt: now,
    } satisfies Partial<JobRecord>);
    if (earlier === undefined) this.add(r, p.name, until.toISOString(), now);
    this.publish(JOBS_TOPIC, r.queue);
    return { until: new Date(until.getTime()) };
  }

  /** The job if `workerId` holds it under this generation with its lease unexpired at `now`. */
  private held(workerId: string, ref: JobLeaseRef, now: Date): JobRecord | undefined {
    const r = this.jobs.record(ref.id);
    return r?.status === 'processing' &&
      r.claimedBy === workerId &&
      r.generation === ref.generation &&
      (r.leaseExpiresAt?.getTime() ?? 0) > now.getTime()
      ? r
      : undefined;
  }

  private find(id: number, name: string): StepRecord | undefined {
    return this.steps.get(id)?.find((s) => s.name === name);
  }

  private add(r: JobRecord, name: string, value: unknown, now: Date): void {
    let list = this.steps.get(r.id);
    if (!list) {
      this.sweep();
      this.steps.set(r.id, (list = []));
    }
    list.push({ name, value, generation: r.generation, recordedAt: new Date(now.getTime()) });
  }

  /** Drops the steps of deleted jobs once the map has doubled since the last sweep. */
  private sweep(): void {
    if (this.steps.size < Math.max(64, this.sweptAt * 2)) return;
    for (const id of this.steps.keys()) if (!this.jobs.record(id)) this.steps.delete(id);
    this.sweptAt = this.steps.size;
  }
}
