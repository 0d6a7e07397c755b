/**
 * The worker family of the engine seam: one row per worker instance (library or HTTP), its
 * liveness judged by when it last said so.
 */
import type { WorkerInfo, WorkerKind, WorkerStatus } from '../core/types.js';

export interface WorkerRegisterParams {
  id: string;
  name: string;
  host: string;
  pid: number;
  queues: readonly string[];
  concurrency: number;
  /** Default `library`. */
  kind?: WorkerKind;
}

export interface WorkerOperations {
  workerRegister(params: WorkerRegisterParams): Promise<WorkerInfo>;
  /** Refreshes last_seen_at and in-flight; sets status when given. Null when unknown. */
  workerHeartbeat(params: {
    id: string;
    inFlight: number;
    status?: WorkerStatus;
  }): Promise<WorkerInfo | null>;
  workerList(params: { status?: WorkerStatus; limit: number }): Promise<WorkerInfo[]>;
  /** Alive or draining workers silent longer than `silentForMs` -> dead; returns how many. */
  workerMarkDead(params: { silentForMs: number; limit: number }): Promise<number>;
}
