/**
 * The trends family in process, with the rules of src/engine/trends.ts: the same figures the
 * PostgreSQL statement computes, read from the job records, into a map keyed by minute and
 * queue. Each method runs without awaiting, so each is atomic like that one statement.
 */
import { pickupBucketValue } from '../../core/pickup-buckets.js';
import {
  MINUTE_MS,
  minuteOf,
  percentileCont,
  weightedPercentileCont,
  type QueueTrendMinute,
  type TrendDepth,
} from '../../core/trends.js';
import type {
  TrendOperations,
  TrendsListParams,
  TrendsPruneParams,
  TrendsRecordParams,
  TrendsRecorded,
} from '../trends.js';
import { byCodePoint } from './code-point-order.js';
import type { JobRecord } from './memory-job-record.js';
import type { MemoryJobTallies } from './memory-job-tallies.js';

type Row = { -readonly [K in keyof QueueTrendMinute]: QueueTrendMinute[K] };

/** Mutable figures of one (minute, queue) while a record is computed. */
interface Figures {
  completed: number;
  failed: number;
  dead: number;
  pickups: number[];
  /** Starts of jobs deleted since, by pickup latency bucket (their tallies). */
  buckets: Map<number, number>;
  depth: TrendDepth | null;
}

const FINISHED = new Set(['completed', 'dead', 'cancelled']);

export class MemoryTrends implements TrendOperations {
  /** Rows by `${minute ms}|${queue}`. */
  private readonly rows = new Map<string, Row>();

  constructor(
    private readonly now: () => Date,
    /** Every job record, as the jobs family holds it (read only). */
    private readonly jobs: () => Iterable<JobRecord>,
    /** What jobs deleted as they completed left behind. */
    private readonly tallies: MemoryJobTallies,
  ) {}

  async trendsRecord(p: TrendsRecordParams): Promise<TrendsRecorded> {
    const current = minuteOf(this.now()).getTime();
    let newest = Number.NEGATIVE_INFINITY;
    for (const row of this.rows.values()) newest = Math.max(newest, row.minute.getTime());
    const first = Math.max(current - (p.maxMinutes - 1) * MINUTE_MS, newest);
    const figures = new Map<string, Figures>();
    const at = (minute: number, queue: string): Figures => {
      const key = `${minute}|${queue}`;
      let found = figures.get(key);
      if (!found) {
        found = { completed: 0, failed: 0, dead: 0, pickups: [], buckets: new Map(), depth: null };
        figures.set(key, found);
      }
      return found;
    };
    const depths = new Map<string, { waiting: number; pending: number; processing: number }>();
    for (const job of this.jobs()) {
      // The same candidates the SQL reads: what may hold an event at or after `first`.
      const finished = FINISHED.has(job.status);
      const candidate =
        job.status === 'processing' ||
        (finished && job.finishedAt !== null && job.finishedAt.getTime() >= first) ||
        (job.status === 'pending' && job.claimedAt !== null && job.updatedAt.getTime() >= first);
      if (candidate) {
        if (
          (job.status === 'completed' || job.status === 'dead') &&
          job.finishedAt!.getTime() >= first
        ) {
          const f = at(minuteOf(job.finishedAt!).getTime(), job.queue);
          if (job.status === 'completed') f.completed++;
          else f.dead++;
        }
        if (job.status !== 'pending' && job.claimedAt && job.claimedAt.getTime() >= first) {
          at(minuteOf(job.claimedAt).getTime(), job.queue).pickups.push(
            Math.max(0, job.claimedAt.getTime() - job.availableAt.getTime()),
          );
        }
        job.errors.forEach((error, i) => {
          const final = job.status === 'dead' && i === job.errors.length - 1;
          if (!final && error.at.getTime() >= first)
            at(minuteOf(error.at).getTime(), job.queue).failed++;
        });
      }
      if (job.status === 'waiting' || job.status === 'pending' || job.status === 'processing') {
        const depth = depths.get(job.queue) ?? { waiting: 0, pending: 0, processing: 0 };
        depth[job.status]++;
        depths.set(job.queue, depth);
      }
    }
    // Each event lives either on its job's record or, once the job was deleted, in a tally.
    for (const t of this.tallies.since(first)) {
      const f = at(t.minute, t.queue);
      if (t.event === 'completed') f.completed += t.jobs;
      else if (t.event === 'failed') f.failed += t.jobs;
      else f.buckets.set(t.bucket, (f.buckets.get(t.bucket) ?? 0) + t.jobs);
    }
    // Tallies of minutes no record will cover again have done their work.
    this.tallies.dropBefore(first);
    // Rows of the minute under way get its depth now, though their queue emptied.
    for (const row of this.rows.values())
      if (row.minute.getTime() === current) at(current, row.queue);
    for (const [queue, depth] of depths) at(current, queue).depth = depth;
    for (const [key, f] of figures)
      if (key.startsWith(`${current}|`) && f.depth === null)
        f.depth = { waiting: 0, pending: 0, processing: 0 };
    let written = 0;
    for (const [key, f] of figures) {
      const separator = key.indexOf('|');
      const minute = Number(key.slice(0, separator));
      if (minute < first || minute > current) continue;
      this.upsert(new Date(minute), key.slice(separator + 1), f);
      written++;
    }
    return { from: new Date(first), through: new Date(current), rows: written };
  }

  /** Rewrites a row as the SQL's ON CONFLICT does: counts never go down, depth is kept if none. */
  private upsert(minute: Date, queue: string, f: Figures): void {
    const key = `${minute.getTime()}|${queue}`;
    const old = this.rows.get(key);
    let started = f.pickups.length;
    for (const jobs of f.buckets.values()) started += jobs;
    const fresh: Row = {
      minute,
      queue,
      completed: f.completed,
      failed: f.failed,
      dead: f.dead,
      started,
      pickupP50Ms: pickupPercentile(f, 0.5),
      pickupP99Ms: pickupPercentile(f, 0.99),
      depth: f.depth,
    };
    if (!old) {
      this.rows.set(key, fresh);
      return;
    }
    const newer = started >= old.started;
    this.rows.set(key, {
      minute,
      queue,
      completed: Math.max(old.completed, fresh.completed),
      failed: Math.max(old.failed, fresh.failed),
      dead: Math.max(old.dead, fresh.dead),
      started: Math.max(old.started, started),
      pickupP50Ms: newer ? fresh.pickupP50Ms : old.pickupP50Ms,
      pickupP99Ms: newer ? fresh.pickupP99Ms : old.pickupP99Ms,
      depth: fresh.depth ?? old.depth,
    });
  }

  async trendsList(p: TrendsListParams): Promise<QueueTrendMinute[]> {
    const from = p.from.getTime();
    const to = p.to.getTime();
    return [...this.rows.values()]
      .filter((r) => {
        const m = r.minute.getTime();
        return m >= from && m < to && (p.queue === undefined || r.queue === p.queue);
      })
      .sort((a, b) => a.minute.getTime() - b.minute.getTime() || byCodePoint(a.queue, b.queue))
      .map((r) => structuredClone(r));
  }

  async trendsPrune(p: TrendsPruneParams): Promise<number> {
    const cutoff = this.now().getTime() - p.olderThanMs;
    this.tallies.dropBefore(cutoff);
    const doomed = [...this.rows.entries()]
      .filter(([, r]) => r.minute.getTime() < cutoff)
      .sort(([, a], [, b]) => a.minute.getTime() - b.minute.getTime())
      .slice(0, Math.max(0, p.limit));
    for (const [key] of doomed) this.rows.delete(key);
    return doomed.length;
  }
}

/** The exact percentile of the starts still on their jobs, with deleted jobs' buckets if any. */
function pickupPercentile(f: Figures, p: number): number | null {
  if (f.buckets.size === 0) return percentileCont(f.pickups, p);
  return weightedPercentileCont(
    [
      ...f.pickups.map((value) => ({ value, weight: 1 })),
      ...[...f.buckets].map(([bucket, weight]) => ({ value: pickupBucketValue(bucket), weight })),
    ],
    p,
  );
}
