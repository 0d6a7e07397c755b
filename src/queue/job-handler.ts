/** The handler a worker runs for each job, and what it receives besides the job. */
import type { Job } from '../core/types.js';
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
   * Completes the job inside your own transaction, with your business writes: both commit or
   * neither does. Throws `lease_lost` (roll back!) when the job is no longer this worker's, and
   * the `timeout` error (roll back too) once the attempt has timed out.
   */
  complete(tx: CallerTransaction, result?: unknown): Promise<void>;
}

/** Returns the job's result (any JSON value); throwing fails the attempt. */
export type JobHandler = (job: Job, context: JobContext) => Promise<unknown>;
