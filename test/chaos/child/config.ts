/** What the harness tells a child to be (one JSON object in the CHAOS_CHILD variable). */
import type { Variant } from '../variants/index.js';

export type Role =
  'holder' | 'leader' | 'worker' | 'scheduler' | 'producer' | 'service' | 'workflow';

export interface ChildConfig {
  role: Role;
  proc: string;
  incarnation: number;
  databaseUrl: string;
  schema: string;
  variant: Variant;
  lease: { resource: string; ttlMs: number; renewEveryMs: number; marginMs: number };
  /** Holders also compete for a session lock. */
  sessionLock: string | null;
  /**
   * Holders also run `loops` quick acquire → fenced increment → release cycles on these shared
   * resources, for volume (a long run counts its acquisitions in the hundred thousands).
   */
  churn: { resources: string[]; loops: number; ttlMs: number } | null;
  election: { name: string; ttlMs: number; renewEveryMs: number; pollEveryMs: number };
  worker: {
    queue: string;
    leaseTtlMs: number;
    concurrency: number;
    /**
     * Queues with flow control (configured by the harness before the children start), each
     * served by a worker of its own with this local concurrency, above the queue's cap.
     */
    limited: { queue: string; concurrency: number }[];
  };
  schedule: { name: string; everyMs: number };
  /** The workflow role: a worker of three-step jobs and flow parents on this queue. */
  workflow: { queue: string; leaseTtlMs: number; concurrency: number };
}
