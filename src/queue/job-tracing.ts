/**
 * The seam through which tracing sees enqueues and handler runs (decision 0260). The queue and
 * the worker call it when a Leasehold has one installed (`lh.instrument`); it knows nothing of
 * OpenTelemetry, so the library's main import graph never loads `@opentelemetry/api`:
 * `leasehold/opentelemetry` implements it. With none installed, an enqueue or a handler run
 * costs one lookup more.
 */
import type { Job } from '../core/types.js';
import type { JobSpec } from '../engine/jobs.js';
import type { JobContext } from './job-handler.js';

export interface JobTracing {
  /**
   * One enqueue call of `specs` (validated, owned by the call: headers may be added to them)
   * to `queue`; `send` writes them and answers the jobs in order.
   */
  enqueue(
    queue: string,
    specs: readonly JobSpec[],
    send: () => Promise<readonly Job[]>,
  ): Promise<readonly Job[]>;
  /** One handler run: `run` calls the handler, and its answer or error is passed on unchanged. */
  handle(job: Job, context: JobContext, run: () => Promise<unknown>): Promise<unknown>;
}

/** How the queue and the worker find the tracing installed now (undefined: none). */
export type CurrentJobTracing = () => JobTracing | undefined;

export const noJobTracing: CurrentJobTracing = () => undefined;
