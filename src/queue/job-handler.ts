/** The handler a worker runs for each job, and what it receives besides the job. */
import type { Duration } from '../core/duration.js';
import type { JobChild } from '../core/flows.js';
import type { Job, JobProgress } from '../core/types.js';
import type { CallerTransaction } from '../engine/engine.js';
import type { StepFunction } from './job-steps.js';

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
   * Runs `fn` once for this job, however many times the job runs (decision 0254): in a
   * transaction (`tx`; on the memory engine, write with `tx.onCommit`) that also records the
   * step's answer, guarded by this run's ownership of the job. A step recorded by an earlier run
   * answers its recorded value without running. The answer is what JSON holds (undefined: null;
   * a Date comes back as a string; a function, bigint or cycle is `invalid_argument`). `fn`
   * throwing rolls the step back and the error propagates. A stale run's step is rolled back
   * and throws `lease_lost` (its signal fires); after a timeout or loss, the stop reason.
   * `name`: non-empty, at most 200 characters, unique within the job.
   */
  step<T>(name: string, fn: StepFunction<T>): Promise<T>;
  /**
   * Ends this attempt and runs the job again after `duration` (ms, or a string such as "5m"),
   * holding no worker slot meanwhile: the job goes back to pending with its attempt given back
   * (a sleep is not a failure), and the sleep is recorded as a step named `name`. Never returns
   * the first time: it throws a `JobSleepSignal`, which the worker recognises (rethrow it if you
   * catch errors). When the job runs again, the same call returns at once, or sleeps again for
   * the remainder if the job was woken early.
   */
  sleep(name: string, duration: Duration): Promise<void>;
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
