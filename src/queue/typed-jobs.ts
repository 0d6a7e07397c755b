/**
 * Jobs typed by their `type` (issue 27 part 2; decision 0247). A map of job types to payload
 * types, such as `{ 'send-email': Email; 'send-sms': Sms }`, types the payload of each enqueue
 * (`lh.queue<M>(name)`) and of each handler (`lh.worker<M>({ handlers })`) at compile time; at
 * run time the worker dispatches each job to the handler of its type, and a job of a type this
 * worker has no handler for goes to the dead letter with an error that says so.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { Job } from '../core/types.js';
import type { CallerTransaction } from '../engine/engine.js';
import type { BulkJob, EnqueuedJob } from './queue.js';
import type { EnqueueOptions } from './enqueue-options.js';
import { PermanentJobError } from './retry-policy.js';
import type { JobContext, JobHandler } from './job-handler.js';

/** Job type -> payload type. */
export type JobTypes = Record<string, unknown>;

/** A job of type `K` with its typed payload. */
export type TypedJob<M extends JobTypes, K extends keyof M & string> = Omit<
  Job,
  'type' | 'payload'
> & {
  readonly type: K;
  readonly payload: M[K];
};

/** One handler per job type, each seeing its own payload type. */
export type TypedHandlers<M extends JobTypes> = {
  readonly [K in keyof M & string]: (job: TypedJob<M, K>, context: JobContext) => Promise<unknown>;
};

/** A queue whose enqueues must name a type of `M` and give that type's payload. */
export interface TypedEnqueue<M extends JobTypes> {
  enqueue<K extends keyof M & string>(
    payload: M[K],
    options: EnqueueOptions & { type: K },
  ): Promise<EnqueuedJob>;
  enqueueMany(
    jobs: readonly {
      [K in keyof M & string]: BulkJob & {
        payload: M[K];
        options: BulkJob['options'] & { type: K };
      };
    }[keyof M & string][],
    options?: { tx?: CallerTransaction },
  ): Promise<EnqueuedJob[]>;
}

/** The one handler a worker runs for a map of handlers: dispatch by `job.type`. */
export function dispatchByType(handlers: unknown): JobHandler {
  if (typeof handlers !== 'object' || handlers === null || Array.isArray(handlers))
    throw new InvalidArgumentError('handlers', 'must be an object of job type -> handler function');
  const byType = new Map<string, JobHandler>();
  for (const [type, fn] of Object.entries(handlers)) {
    if (typeof fn !== 'function')
      throw new InvalidArgumentError(`handlers.${type}`, 'must be a function');
    byType.set(type, fn as JobHandler);
  }
  if (byType.size === 0)
    throw new InvalidArgumentError('handlers', 'must name at least one job type');
  const known = [...byType.keys()].map((t) => JSON.stringify(t)).join(', ');
  return async (job, context) => {
    const handler = job.type === null ? undefined : byType.get(job.type);
    if (!handler)
      throw new PermanentJobError(
        job.type === null
          ? `job ${job.id} has no type, and this worker handles only the types ${known}`
          : `no handler for job type ${JSON.stringify(job.type)}: this worker handles ${known}`,
      );
    return handler(job, context);
  };
}
