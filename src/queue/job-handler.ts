/** The handler a worker runs for each job, and what it receives besides the job. */
import type { JobChild } from '../core/flows.js';
import type { Job, JobProgress } from '../core/types.js';
import type { CallerTransaction } from '../engine/engine.js';

/** What a handler receives besides its job. */
export interface JobContext {
  /** The job's fencing token (its lease generation): pass it to downstream writes. */
  readonly token: number;
  /** 1 on the first attempt. */
  readonly attempt: number;
  /**
   * Fires when the worker must stop: lease lost, job cancelled, the job's timeout (a
   * `JobTimeoutError`), drain hand-back or hard stop.
   */
  readonly signal: AbortSignal;
  /** Renews this worker's leases now (a long step is about to start); resolves when done. */
  renew(): Promise<void>;
  /** @deprecated the former name of `renew()` (decision 0235); it does the same. */
  heartbeat(): Promise<void>;
  /**
   * Reports how far the job has got: a percentage from 0 to 100, or a small JSON object (at most
   * 64 KiB). Returns at once: the worker writes the latest value of each job at most every
   * 250 ms (decision 0251), so calling it in a tight loop is cheap. A value still unwritten when
   * the handler returns is dropped (the completion says more); when it throws, it is written
   * before the failure. Throws `invalid_argument` for anything else, and the stop reason
   * (`lease_lost`, `timeout`, …) once the job is no longer this handler's. A write the database
   * refuses means the lease is lost: the signal fires, as when a renewal is refused.
   */
  progress(value: JobProgress): void;
  /**
   * Completes the job inside your own transaction, with your business writes: both commit or
   * neither does. Throws `lease_lost` (roll back!) when the job is no longer this worker's, and
   * the `timeout` error (roll back too) once the attempt has timed out.
   */
  complete(tx: CallerTransaction, result?: unknown): Promise<void>;
  /**
   * The direct children of this job when it is a flow's parent (decision 0255), in enqueue
   * order: `{ id, queue, type, status, result, lastError, parentPolicy }` each. All completed,
   * unless a child with `parentPolicy: 'ignore'` ended otherwise (its status says how). Empty
   * for a job without children.
   */
  childResults(): Promise<JobChild[]>;
}

/** Returns the job's result (any JSON value); throwing fails the attempt. */
export type JobHandler = (job: Job, context: JobContext) => Promise<unknown>;
