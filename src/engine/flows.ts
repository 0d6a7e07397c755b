/**
 * The flow family of the engine seam (decision 0255): a tree of jobs enqueued at once, whose
 * parents wait (status `waiting`) until their children are done.
 *
 * Rules every engine obeys (the conformance suite checks each):
 * - `jobEnqueueFlow` writes the whole tree or nothing (one statement on PostgreSQL, in the
 *   caller's transaction when given). Jobs are numbered in pre-order (a parent before its
 *   children, siblings in their order), so a parent's children are in id order. A node with
 *   children starts `waiting` with `children.length` children left; a leaf starts `pending`.
 *   Only the root may have a key: when a live job of its queue holds it, nothing is written and
 *   that job is answered (`created: false`, no children).
 * - A child finishing settles its waiting parent in the same transaction, whatever finished it:
 *   completed (or deleted by a completion with removal) counts it done; dead, cancelled, or
 *   deleted before completing applies its `parentPolicy`: `ignore` counts it done,
 *   `fail-parent` makes the parent dead (`child #<id> failed: <its last error>`, `… was
 *   cancelled`, `… was deleted before it completed`), `cancel-siblings` also cancels the
 *   parent's pending and waiting children. The last child done makes the parent `pending`
 *   (claimable at its own `availableAt`) and announces its queue on topic `jobs`. A parent that
 *   is not waiting (dead, cancelled, retried) is not changed by a late child.
 * - A parent cancelled or deleted cancels its pending and waiting children, recursively;
 *   running children finish. Pruning (finished jobs only) settles nothing.
 * - `jobChildren` answers direct children in id order (enqueue order).
 */
import type { JobChild, ParentPolicy } from '../core/flows.js';
import type { Job } from '../core/types.js';
import type { JobSpec } from './jobs.js';
import type { CallerTransaction } from './types.js';

/** One node of a flow: its job, what its failure does to its parent, and its children. */
export interface FlowNode {
  readonly spec: JobSpec;
  /** Ignored on the root; default `fail-parent`. */
  readonly parentPolicy?: ParentPolicy;
  readonly children?: readonly FlowNode[];
}

export interface JobEnqueueFlowParams {
  readonly root: FlowNode;
  /** Write the flow inside the caller's transaction: it exists only if that commits. */
  readonly tx?: CallerTransaction;
}

/** A node as written: its job, and its children's outcomes in their order. */
export interface FlowOutcome {
  readonly job: Job;
  /** False when the root's key met a live job: `job` is that job, and nothing was written. */
  readonly created: boolean;
  readonly children: readonly FlowOutcome[];
}

export interface JobChildrenParams {
  readonly id: number;
  /** At most this many children, the first in id order; absent: all of them. */
  readonly limit?: number;
}

export interface JobChildren {
  readonly children: JobChild[];
  /** How many direct children the job has in all. */
  readonly total: number;
}

export interface FlowOperations {
  jobEnqueueFlow(params: JobEnqueueFlowParams): Promise<FlowOutcome>;
  jobChildren(params: JobChildrenParams): Promise<JobChildren>;
}

/** A flow in pre-order: each node with its index's parent (`parent`, -1 for the root). */
export interface FlatNode {
  readonly spec: JobSpec;
  readonly parent: number;
  readonly parentPolicy: ParentPolicy;
  readonly childCount: number;
}

export function flattenFlow(root: FlowNode): FlatNode[] {
  const out: FlatNode[] = [];
  const visit = (node: FlowNode, parent: number): void => {
    const children = node.children ?? [];
    const index = out.length;
    out.push({
      spec: node.spec,
      parent,
      parentPolicy: node.parentPolicy ?? 'fail-parent',
      childCount: children.length,
    });
    for (const child of children) visit(child, index);
  };
  visit(root, -1);
  return out;
}

/** The nested answer from the jobs written for `flat`, in the same (pre-)order. */
export function nestOutcome(flat: readonly FlatNode[], jobs: readonly Job[]): FlowOutcome {
  const outcomes = jobs.map((job) => ({ job, created: true, children: [] as FlowOutcome[] }));
  flat.forEach((node, i) => {
    if (node.parent >= 0) outcomes[node.parent]!.children.push(outcomes[i]!);
  });
  return outcomes[0]!;
}
