/** What a Worker tells its listeners (worker.events): tests, logs, metrics and the service. */
import type { Job } from '../core/types.js';

export interface WorkerEvents {
  'job:started': { job: Job };
  'job:completed': { job: Job; durationMs: number };
  /**
   * `outcome` is null when the failure was refused because the job was no longer ours;
   * `timedOut` says the attempt was failed at its timeout (`error` is then the JobTimeoutError).
   */
  'job:failed': {
    job: Job;
    error: string;
    outcome: 'retried' | 'dead' | null;
    timedOut: boolean;
    /** From the attempt's start until its outcome was written, like `job:completed`'s. */
    durationMs: number;
  };
  /** The worker stopped trusting its lease on the job (expired, cancelled, taken over). */
  'job:lost': { job: Job; reason: string };
  /** The handler's `ctx.sleep` ended the attempt: the job runs again at `until`. */
  'job:slept': { job: Job; step: string; until: Date };
  /** A claim came back: `taken` jobs of the `asked` (its jobs already started). */
  'claim:answered': { taken: number; asked: number };
  'worker:drained': { handedBack: number };
  'worker:error': { where: string; error: unknown };
  [name: string]: unknown;
}
