/**
 * The user-facing types of flows (decision 0255): what a child's failure does to its parent,
 * and a child as its parent's handler and the jobs API see it.
 */
import type { JobStatus } from './types.js';

/**
 * What a child that ends without completing (dead, cancelled, or deleted before it completed)
 * does to its waiting parent: `fail-parent` (the default) dead-letters the parent with the
 * child's error; `ignore` counts the child as done; `cancel-siblings` dead-letters the parent
 * and cancels its other pending and waiting descendants.
 */
export type ParentPolicy = 'fail-parent' | 'ignore' | 'cancel-siblings';
export const PARENT_POLICIES: readonly ParentPolicy[] = [
  'fail-parent',
  'ignore',
  'cancel-siblings',
];

/**
 * Whether completing `job` may delete it (a worker's `removeOnComplete`, a consumer's
 * `removeOnAck`): not a flow's child, whose parent reads its result when it runs. The engine
 * deletes what it is told to, so every caller asks this one rule.
 */
export function removableOnComplete(job: { readonly parentId: number | null }): boolean {
  return job.parentId === null;
}

/** A direct child of a flow's parent, as `ctx.childResults()` and `lh.jobs.children` answer it. */
export interface JobChild {
  readonly id: number;
  readonly queue: string;
  readonly type: string | null;
  readonly status: JobStatus;
  /** What its handler returned (null until it completes). */
  readonly result: unknown;
  readonly lastError: string | null;
  readonly parentPolicy: ParentPolicy;
}
