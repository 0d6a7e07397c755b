/**
 * The facts an engine gathers about one job to explain why it is not running, and the one rule
 * both engines apply to them (core/types JobExplanation gives the order), so that the two can
 * only differ in what they read, never in how they decide.
 */
import type { JobExplanation, JobStatus, QueueSettings } from '../core/types.js';

export interface JobExplainFacts {
  readonly status: JobStatus;
  readonly attempts: number;
  readonly availableAt: Date;
  readonly now: Date;
  readonly settings: QueueSettings;
  /** The oldest older unfinished job of the job's partition, if any. */
  readonly olderLiveHead: number | null;
  /** Older unfinished jobs of the partition (counted up to the cap at least). */
  readonly olderLive: number;
  /** Younger processing jobs of the partition, and the oldest of them. */
  readonly youngerProcessing: number;
  readonly youngerProcessingHead: number | null;
  /** Processing jobs of the queue that count against its concurrency. */
  readonly inFlight: number;
  /** Starts inside the rate's window, oldest first. */
  readonly windowStarts: readonly Date[];
  /** A live worker lists the job's queue. */
  readonly served: boolean;
  /** A waiting parent's children not yet done (decision 0255); absent or null otherwise. */
  readonly childrenLeft?: number | null;
}

export function explainJob(f: JobExplainFacts): JobExplanation {
  if (f.status === 'waiting') return { reason: 'children', unfinished: f.childrenLeft ?? 0 };
  if (f.status !== 'pending') return { reason: 'not-pending', status: f.status };
  if (f.availableAt.getTime() > f.now.getTime())
    return {
      reason: f.attempts > 0 ? 'backoff' : 'scheduled',
      until: new Date(f.availableAt.getTime()),
    };
  const s = f.settings;
  if (s.paused) return { reason: 'paused' };
  const perKey = s.perKeyConcurrency;
  if (perKey !== null && f.olderLive + f.youngerProcessing >= perKey) {
    const behind = f.olderLiveHead ?? f.youngerProcessingHead;
    if (behind !== null) return { reason: 'partition', behind };
  }
  if (s.concurrency !== null && f.inFlight >= s.concurrency)
    return { reason: 'concurrency', inFlight: f.inFlight, limit: s.concurrency };
  if (s.rate !== null && f.windowStarts.length >= s.rate.limit) {
    // The window admits a start once its oldest `length - limit + 1` starts have left it.
    const freeing = f.windowStarts[f.windowStarts.length - s.rate.limit]!;
    return {
      reason: 'rate',
      nextSlotAt: new Date(freeing.getTime() + s.rate.per),
      limit: s.rate.limit,
      per: s.rate.per,
    };
  }
  if (!f.served) return { reason: 'no-worker' };
  return { reason: 'ready' };
}
