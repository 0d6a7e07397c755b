/**
 * Queue settings in process, with the rules of the PostgreSQL engine (decision 0239): a queue
 * without an entry has the defaults, and an entry whose settings became the defaults is
 * dropped. The rate's window (`starts`, claim instants in ms, oldest first) lives beside the
 * settings, as it does in the `queues` row; MemoryJobs reads both when it claims (and
 * MemoryJobStore the settings when a job finishes).
 */
import {
  defaultQueueSettings,
  isDefaultQueueSettings,
  type JobExplanation,
  type QueueSettings,
} from '../../core/types.js';
import { explainJob, type JobExplainFacts } from '../explain.js';
import { JOBS_TOPIC } from '../jobs.js';
import type { QueueOperations, QueueSettingsChange } from '../queues.js';

export interface QueueState {
  settings: QueueSettings;
  /** Claim instants (ms) inside the rate's window, oldest first. */
  starts: number[];
}

/** What the queue family reads from the other families to explain a job. */
export interface ExplainSources {
  /** The job's own facts (MemoryJobs.explainFacts), or undefined when there is no such job. */
  jobFacts(id: number):
    | (Omit<JobExplainFacts, 'settings' | 'windowStarts' | 'served' | 'inFlight'> & {
        queue: string;
        inQueueProcessing: number;
      })
    | undefined;
  /** A live worker lists the queue. */
  served(queue: string): boolean;
}

export class MemoryQueues implements QueueOperations {
  private readonly states = new Map<string, QueueState>();

  constructor(
    private readonly publish: (topic: string, payload: string) => void,
    private readonly sources: ExplainSources,
  ) {}

  async jobExplain(p: { id: number; queue?: string }): Promise<JobExplanation | null> {
    const facts = this.sources.jobFacts(p.id);
    if (!facts || (p.queue !== undefined && facts.queue !== p.queue)) return null;
    const state = this.states.get(facts.queue);
    const settings = state?.settings ?? defaultQueueSettings(facts.queue);
    const windowStart = facts.now.getTime() - (settings.rate?.per ?? 0);
    return explainJob({
      ...facts,
      settings,
      inFlight: facts.inQueueProcessing,
      windowStarts: settings.rate
        ? (state?.starts ?? []).filter((t) => t > windowStart).map((t) => new Date(t))
        : [],
      served: this.sources.served(facts.queue),
    });
  }

  /** The queue's settings and window, or undefined for a queue with the defaults. */
  state(queue: string): QueueState | undefined {
    return this.states.get(queue);
  }

  async queueSettingsGet(p: { queue: string }): Promise<QueueSettings> {
    return { ...(this.states.get(p.queue)?.settings ?? defaultQueueSettings(p.queue)) };
  }

  async queueSettingsList(): Promise<QueueSettings[]> {
    return [...this.states.values()]
      .map((s) => ({ ...s.settings }))
      .sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
  }

  async queueConfigure(p: { queue: string; change: QueueSettingsChange }): Promise<QueueSettings> {
    const before = this.states.get(p.queue) ?? {
      settings: defaultQueueSettings(p.queue),
      starts: [],
    };
    const c = p.change;
    const settings: QueueSettings = {
      queue: p.queue,
      paused: c.paused ?? before.settings.paused,
      concurrency: c.concurrency !== undefined ? c.concurrency : before.settings.concurrency,
      perKeyConcurrency:
        c.perKeyConcurrency !== undefined ? c.perKeyConcurrency : before.settings.perKeyConcurrency,
      rate: c.rate !== undefined ? (c.rate === null ? null : { ...c.rate }) : before.settings.rate,
      fairness: c.fairness ?? before.settings.fairness,
    };
    // A new rate keeps the newest starts that fit its limit, as the SQL does.
    const starts = settings.rate ? before.starts.slice(-settings.rate.limit) : [];
    if (isDefaultQueueSettings(settings)) this.states.delete(p.queue);
    else this.states.set(p.queue, { settings, starts });
    this.publish(JOBS_TOPIC, p.queue);
    return { ...settings };
  }
}
