/**
 * What jobs deleted as they completed leave for the trends (decision 0270), in process: the
 * events their rows no longer show, counted per (minute, queue, event, bucket) as PostgreSQL's
 * `job_tallies` counts them in the deleting statement. Read and pruned by MemoryTrends.
 */
import { pickupBucket } from '../../core/pickup-buckets.js';
import { minuteOf } from '../../core/trends.js';
import type { JobRecord } from './memory-job-record.js';

export type TallyEvent = 'completed' | 'failed' | 'started';

export interface Tally {
  readonly minute: number;
  readonly queue: string;
  readonly event: TallyEvent;
  /** The pickup latency bucket of a start; 0 for the other events. */
  readonly bucket: number;
  jobs: number;
}

export class MemoryJobTallies {
  private readonly tallies = new Map<string, Tally>();

  /** Counts the events of a completed job about to be deleted; `now` is its completion. */
  countRemoved(r: JobRecord, now: Date): void {
    this.add(minuteOf(now).getTime(), r.queue, 'completed', 0);
    if (r.claimedAt) {
      const pickupMs = Math.max(0, r.claimedAt.getTime() - r.availableAt.getTime());
      this.add(minuteOf(r.claimedAt).getTime(), r.queue, 'started', pickupBucket(pickupMs));
    }
    for (const error of r.errors) this.add(minuteOf(error.at).getTime(), r.queue, 'failed', 0);
  }

  /** The tallies of minutes at or after `from` (ms). */
  since(from: number): Tally[] {
    return [...this.tallies.values()].filter((t) => t.minute >= from);
  }

  /** Drops the tallies of minutes before `before` (ms); answers how many. */
  dropBefore(before: number): number {
    let dropped = 0;
    for (const [key, t] of this.tallies)
      if (t.minute < before) {
        this.tallies.delete(key);
        dropped++;
      }
    return dropped;
  }

  private add(minute: number, queue: string, event: TallyEvent, bucket: number): void {
    const key = `${minute}|${event}|${bucket}|${queue}`;
    const found = this.tallies.get(key);
    if (found) found.jobs++;
    else this.tallies.set(key, { minute, queue, event, bucket, jobs: 1 });
  }
}
