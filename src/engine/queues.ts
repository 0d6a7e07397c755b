/**
 * The queue settings family: flow control stored in the database, read by every claim
 * (decision 0239). A queue without stored settings has the defaults (core/types
 * defaultQueueSettings); an engine keeps no row for a queue whose settings are all defaults,
 * so that its claims take the plain path.
 */
import type { JobExplanation, QueueSettings } from '../core/types.js';

/** A change to a queue's settings: absent fields stay as they are, `null` removes a limit. */
export interface QueueSettingsChange {
  readonly paused?: boolean;
  readonly concurrency?: number | null;
  readonly perKeyConcurrency?: number | null;
  readonly rate?: { readonly limit: number; readonly per: number } | null;
  readonly fairness?: QueueSettings['fairness'];
}

export interface QueueOperations {
  /** The queue's settings (the defaults when it has none). */
  queueSettingsGet(params: { queue: string }): Promise<QueueSettings>;
  /** Every queue with settings other than the defaults, by name. */
  queueSettingsList(): Promise<QueueSettings[]>;
  /** Applies `change` atomically and returns the settings now in force. */
  queueConfigure(params: { queue: string; change: QueueSettingsChange }): Promise<QueueSettings>;
  /**
   * Why the job is not running (explain.ts decides); null when no job has this id (or, with
   * `queue`, none of that queue).
   */
  jobExplain(params: { id: number; queue?: string }): Promise<JobExplanation | null>;
}
