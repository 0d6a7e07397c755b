/**
 * Flows (decision 0255): what `queue.enqueueFlow` and `queue.enqueueFanIn` accept, and the one
 * place that checks it. A flow is checked whole before anything is written, so bad input at
 * any depth gets an `invalid_argument` naming the field by its path (`children[1].options.key`)
 * and writes nothing.
 */
import { typeName } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { PARENT_POLICIES, type ParentPolicy } from '../core/flows.js';
import type { Job } from '../core/types.js';
import { requireName, requireOneOf } from '../core/validate.js';
import type { CallerTransaction } from '../engine/engine.js';
import type { FlowNode, FlowOutcome } from '../engine/flows.js';
import type { JobSpec } from '../engine/jobs.js';
import { toJobSpec, type EnqueueOptions } from './enqueue-options.js';

/** What a flow's root may say about itself: enqueue's options but the replacing ones. */
export type FlowRootOptions = Omit<EnqueueOptions, 'onConflict' | 'debounce'>;

/** What a child may say: enqueue's options without key and tx, and its `parentPolicy`. */
export interface FlowChildOptions extends Omit<FlowRootOptions, 'key' | 'tx'> {
  /** What this child ending without completing does to its parent (default `fail-parent`). */
  parentPolicy?: ParentPolicy;
}

/** A child of a flow: a job of `queue`, itself the parent of its own `children` if given. */
export interface FlowChild {
  queue: string;
  payload: unknown;
  options?: FlowChildOptions;
  /** Not empty when given; this child then runs once they are done. */
  children?: FlowChild[];
}

/** A flow: the root job of the queue it is enqueued on, run once its children are done. */
export interface FlowDefinition {
  payload: unknown;
  options?: FlowRootOptions;
  /** At least one. */
  children: FlowChild[];
}

/** "Run once after these N jobs": N children of one queue, and a parent keyed by the call. */
export interface FanInDefinition {
  /** The parent's payload. */
  payload: unknown;
  /** The parent's options; its key is the call's. */
  options?: Omit<FlowRootOptions, 'key'>;
  children: {
    queue: string;
    /** One child per payload, at least one. */
    payloads: unknown[];
    /** For every child alike. */
    options?: FlowChildOptions;
  };
}

/** A job of a flow as written, and its children in their order. */
export interface FlowJob {
  readonly job: Job;
  readonly children: readonly FlowJob[];
}

/**
 * What enqueueFlow answers: the root and its tree. `created` is false when the root's key met a
 * live job of the queue: `job` is that job, and nothing was written (`children` is empty).
 */
export interface EnqueuedFlow extends FlowJob {
  readonly created: boolean;
}

export const FLOW_LIMITS = {
  /** Jobs in one flow, the root included: one statement writes them all. */
  jobsMax: 10_000,
  /** Levels below the root. */
  depthMax: 16,
} as const;

const ROOT_FIELDS = ['payload', 'options', 'children'];
const CHILD_FIELDS = ['queue', 'payload', 'options', 'children'];
const ROOT_OPTIONS = [
  'type',
  'headers',
  'key',
  'partitionKey',
  'priority',
  'delay',
  'runAt',
  'maxAttempts',
  'timeout',
  'tx',
];
const CHILD_OPTIONS = [...ROOT_OPTIONS.filter((o) => o !== 'key' && o !== 'tx'), 'parentPolicy'];

/** The checked flow and its transaction; throws `invalid_argument` (nothing written) otherwise. */
export function toFlowNode(
  queue: string,
  flow: FlowDefinition,
): { root: FlowNode; tx: CallerTransaction | undefined } {
  requireObject('flow', flow);
  refuseUnknown('', flow, ROOT_FIELDS);
  const options = (flow.options ?? {}) as FlowRootOptions;
  requireObject('options', options);
  refuseUnknownOptions('options.', options, ROOT_OPTIONS);
  const count = { jobs: 1 };
  const { tx, ...rest } = options;
  const root: FlowNode = {
    spec: specOf('', queue, flow.payload, rest),
    children: toChildren('children', flow.children, 1, count),
  };
  return { root, tx };
}

/** The flow a fan-in stands for: a parent keyed `key` on `queue`, one child per payload. */
export function fanInFlow(key: string, fanIn: FanInDefinition): FlowDefinition {
  requireName('key', key);
  requireObject('fanIn', fanIn);
  refuseUnknown('', fanIn, ROOT_FIELDS);
  requireObject('options', fanIn.options ?? {});
  if ('key' in (fanIn.options ?? {}))
    throw new InvalidArgumentError('options.key', 'the fan-in key is the first argument');
  const children = fanIn.children;
  requireObject('children', children);
  refuseUnknown('children.', children, ['queue', 'payloads', 'options']);
  if (!Array.isArray(children.payloads) || children.payloads.length === 0)
    throw new InvalidArgumentError('children.payloads', 'must be a non-empty array of payloads');
  return {
    payload: fanIn.payload,
    options: { ...(fanIn.options ?? {}), key },
    children: children.payloads.map((payload) => ({
      queue: children.queue,
      payload,
      ...(children.options === undefined ? {} : { options: children.options }),
    })),
  };
}

/** The flow's job specs in pre-order (a parent before its children), as the engine numbers them. */
export function flowSpecs(node: FlowNode): JobSpec[] {
  return [node.spec, ...(node.children ?? []).flatMap(flowSpecs)];
}

/** The flow's jobs in the same pre-order. */
export function flowJobs(outcome: FlowOutcome): Job[] {
  return [outcome.job, ...outcome.children.flatMap(flowJobs)];
}

/** The nested answer of the library from the engine's. */
export function toEnqueuedFlow(outcome: FlowOutcome): EnqueuedFlow {
  const nest = (o: FlowOutcome): FlowJob => ({ job: o.job, children: o.children.map(nest) });
  return { ...nest(outcome), created: outcome.created };
}

function toChildren(
  field: string,
  children: unknown,
  depth: number,
  count: { jobs: number },
): FlowNode[] {
  if (!Array.isArray(children) || children.length === 0)
    throw new InvalidArgumentError(
      field,
      `must be a non-empty array of { queue, payload, options?, children? }, got ${Array.isArray(children) ? 'an empty array' : typeName(children)}`,
    );
  if (depth > FLOW_LIMITS.depthMax)
    throw new InvalidArgumentError(field, `a flow is at most ${FLOW_LIMITS.depthMax} levels deep`);
  return children.map((child: unknown, i) => toChild(`${field}[${i}]`, child, depth, count));
}

function toChild(path: string, child: unknown, depth: number, count: { jobs: number }): FlowNode {
  requireObject(path, child);
  const c = child as FlowChild;
  refuseUnknown(`${path}.`, c, CHILD_FIELDS);
  if (++count.jobs > FLOW_LIMITS.jobsMax)
    throw new InvalidArgumentError(path, `a flow has at most ${FLOW_LIMITS.jobsMax} jobs`);
  const options = c.options ?? {};
  requireObject(`${path}.options`, options);
  if ('key' in options)
    throw new InvalidArgumentError(
      `${path}.options.key`,
      'only the root of a flow may have a key (the flow is deduplicated by it)',
    );
  refuseUnknownOptions(`${path}.options.`, options, CHILD_OPTIONS);
  const { parentPolicy, ...enqueueOptions } = options;
  return {
    spec: specOf(`${path}.`, c.queue, c.payload, enqueueOptions),
    parentPolicy:
      parentPolicy === undefined
        ? 'fail-parent'
        : requireOneOf(`${path}.options.parentPolicy`, parentPolicy, PARENT_POLICIES),
    ...(c.children === undefined
      ? {}
      : { children: toChildren(`${path}.children`, c.children, depth + 1, count) }),
  };
}

/** toJobSpec, its errors named by their path in the flow (`children[0].options.delay`). */
function specOf(
  prefix: string,
  queue: unknown,
  payload: unknown,
  options: Omit<EnqueueOptions, 'tx'>,
): ReturnType<typeof toJobSpec> {
  try {
    return toJobSpec(requireName('queue', queue), payload, options);
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    const own = error.field === 'queue' || error.field === 'payload';
    throw error.within(own ? prefix : `${prefix}options.`);
  }
}

function requireObject(field: string, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(field, `must be an object, got ${typeName(value)}`);
}

function refuseUnknown(prefix: string, value: object, known: readonly string[]): void {
  for (const name of Object.keys(value))
    if (!known.includes(name))
      throw new InvalidArgumentError(
        `${prefix}${name}`,
        `is not a field of a flow node (${known.join(', ')})`,
      );
}

function refuseUnknownOptions(prefix: string, value: object, known: readonly string[]): void {
  for (const name of Object.keys(value))
    if (!known.includes(name))
      throw new InvalidArgumentError(
        `${prefix}${name}`,
        `is not an option of a flow job (${known.join(', ')})`,
      );
}
