/**
 * The flow family in process, with the rules of src/engine/flows.ts: what PostgreSQL's
 * `job_flow_ended` (migration 16) does, done by the job families' state transitions. The job
 * store (MemoryJobStore, memory-job-store.ts) calls `finished` after every change to a final
 * status and `deleted` after every removal (but pruning, which settles nothing on PostgreSQL
 * either), in the same synchronous step, so a child's end and its parent's settlement are one
 * atomic change.
 */
import type { JobChild, ParentPolicy } from '../../core/flows.js';
import { UnsupportedError } from '../../core/errors.js';
import {
  flattenFlow,
  nestOutcome,
  type FlowOperations,
  type FlowOutcome,
  type JobChildren,
  type JobChildrenParams,
  type JobEnqueueFlowParams,
} from '../flows.js';
import type { JobSpec } from '../jobs.js';
import { recordError, toJson, view, type JobRecord } from './memory-job-record.js';

/** What the flow family needs of the job family's store and transitions. */
export interface FlowHost {
  now(): Date;
  record(id: number): JobRecord | undefined;
  records(): Iterable<JobRecord>;
  /** The unfinished job holding (queue, key), if any. */
  liveByKey(queue: string, key: string): JobRecord | undefined;
  /** Stores a new job with these fields set; pending unless `status` says otherwise. */
  insert(spec: JobSpec, now: Date, fields: Partial<JobRecord>): JobRecord;
  /** To a final status (MemoryJobStore.finish, which calls `finished` below). */
  finish(
    r: JobRecord,
    status: 'completed' | 'dead' | 'cancelled',
    now: Date,
    woken: Set<string>,
  ): void;
  announce(queues: ReadonlySet<string>): void;
  announceFinished(ids: readonly number[]): void;
}

/** The flow columns of one job: its policy as a child, and its children as a parent. */
interface FlowState {
  policy: ParentPolicy;
  /** Children not yet done while the parent waits; null for a job without children. */
  childrenLeft: number | null;
  children: number[];
}

export class MemoryFlows implements FlowOperations {
  private readonly states = new Map<number, FlowState>();

  constructor(private readonly host: FlowHost) {}

  async jobEnqueueFlow(p: JobEnqueueFlowParams): Promise<FlowOutcome> {
    if (p.tx) throw new UnsupportedError('the memory engine cannot join a caller transaction');
    const now = this.host.now();
    const flat = flattenFlow(p.root);
    const rootSpec = flat[0]!.spec;
    const existing =
      rootSpec.key == null ? undefined : this.host.liveByKey(rootSpec.queue, rootSpec.key);
    if (existing) return { job: view(existing), created: false, children: [] };
    const records: JobRecord[] = [];
    const woken = new Set<string>();
    for (const node of flat) {
      const parent = node.parent >= 0 ? records[node.parent]! : undefined;
      const record = this.host.insert(node.spec, now, {
        status: node.childCount > 0 ? 'waiting' : 'pending',
        parentId: parent?.id ?? null,
      });
      this.states.set(record.id, {
        policy: node.parentPolicy,
        childrenLeft: node.childCount > 0 ? node.childCount : null,
        children: [],
      });
      if (parent) this.states.get(parent.id)!.children.push(record.id);
      if (record.status === 'pending') woken.add(record.queue);
      records.push(record);
    }
    this.host.announce(woken);
    return nestOutcome(flat, records.map(view));
  }

  async jobChildren(p: JobChildrenParams): Promise<JobChildren> {
    // By their parentId, as the SQL reads them: the children of a deleted parent too.
    const present = [...this.host.records()].filter((r) => r.parentId === p.id);
    const shown = p.limit === undefined ? present : present.slice(0, Math.max(0, p.limit));
    return { children: shown.map((r) => this.child(r)), total: present.length };
  }

  /** Children not yet done of a waiting parent (for explain); null for other jobs. */
  childrenLeft(id: number): number | null {
    return this.states.get(id)?.childrenLeft ?? null;
  }

  /** After `r` reached a final status from an unfinished one. */
  finished(r: JobRecord, now: Date, woken: Set<string>): void {
    if (r.status === 'cancelled') this.cancelChildren(r.id, now, woken);
    if (r.parentId !== null) this.settle(r, r.status, now, woken);
  }

  /** After `r` was removed, in the status it had. */
  deleted(r: JobRecord, now: Date, woken: Set<string>): void {
    this.cancelChildren(r.id, now, woken);
    const unfinished = r.status !== 'completed' && r.status !== 'dead' && r.status !== 'cancelled';
    // Only a completion with removal deletes a processing job.
    if (r.parentId !== null && unfinished)
      this.settle(r, r.status === 'processing' ? 'completed' : 'deleted', now, woken);
    this.states.delete(r.id);
  }

  /** Forgets a pruned job: pruning settles nothing, as the PostgreSQL prune does not. */
  forget(id: number): void {
    this.states.delete(id);
  }

  /** A child ended (`outcome`): its waiting parent counts it done, or fails, by its policy. */
  private settle(child: JobRecord, outcome: string, now: Date, woken: Set<string>): void {
    const parent = this.host.record(child.parentId!);
    if (!parent || parent.status !== 'waiting') return;
    const state = this.states.get(parent.id)!;
    const policy = this.states.get(child.id)?.policy ?? 'fail-parent';
    state.childrenLeft = (state.childrenLeft ?? 1) - 1;
    if (outcome === 'completed' || policy === 'ignore') {
      parent.updatedAt = now;
      if (state.childrenLeft <= 0) {
        parent.status = 'pending';
        if (parent.availableAt.getTime() <= now.getTime()) woken.add(parent.queue);
      }
      return;
    }
    // The parent was never claimed for this: no worker or token (as job_flow_settle writes it).
    recordError(parent, failureOf(child, outcome), now, false);
    this.host.finish(parent, 'dead', now, woken);
    this.host.announceFinished([parent.id]);
    if (policy === 'cancel-siblings') this.cancelChildren(parent.id, now, woken);
  }

  /** Cancels the pending and waiting children of `id` (and theirs, through `finished`). */
  private cancelChildren(id: number, now: Date, woken: Set<string>): void {
    const ids = this.states.get(id)?.children ?? [];
    const cancelled: number[] = [];
    for (const childId of ids) {
      const r = this.host.record(childId);
      if (!r || (r.status !== 'pending' && r.status !== 'waiting')) continue;
      this.host.finish(r, 'cancelled', now, woken);
      cancelled.push(r.id);
    }
    this.host.announceFinished(cancelled);
  }

  private child(r: JobRecord): JobChild {
    return {
      id: r.id,
      queue: r.queue,
      type: r.type,
      status: r.status,
      result: toJson(r.result),
      lastError: r.lastError,
      parentPolicy: this.states.get(r.id)?.policy ?? 'fail-parent',
    };
  }
}

/** The error a parent failed by its child records, as job_flow_settle writes it. */
function failureOf(child: JobRecord, outcome: string): string {
  if (outcome === 'dead')
    return `child #${child.id} failed: ${child.lastError ?? 'no error recorded'}`;
  if (outcome === 'cancelled') return `child #${child.id} was cancelled`;
  return `child #${child.id} was deleted before it completed`;
}
