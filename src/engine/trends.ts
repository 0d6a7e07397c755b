/**
 * The trends family of the engine seam (issue 30, decision 0265): a rolling table of per-minute
 * figures per queue, written by the maintainer and read by the console's charts.
 *
 * Rules every engine obeys (the conformance suite checks each):
 * - `trendsRecord` computes the figures from the jobs as they are now, for every whole minute
 *   from the newest minute already recorded (any queue; it may have been recorded while still
 *   current) through the current minute, but never more than `maxMinutes` minutes, and upserts
 *   one row per (minute, queue) that has a figure or, for the current minute, live jobs. It is
 *   idempotent: recording the same minute again rewrites it. Counts never go down on a rewrite
 *   (a job deleted or retried since does not undo what was seen); latencies are replaced when
 *   at least as many starts are seen. Depth is sampled for the current minute only, for every
 *   queue with live jobs or a row of that minute already (0s when its live jobs are gone); a
 *   minute recorded after it ended keeps the depth it had, or none.
 * - A job deleted as it completes (`jobComplete` with `remove`: `removeOnComplete`,
 *   `removeOnAck`) leaves what its row would have shown in a tally, written by that same call
 *   (decision 0270): its completion (at the call's now), its latest claim's start with its
 *   pickup latency's bucket (core/pickup-buckets.ts) and its kept failed attempts. Every event
 *   is counted from a job or from a tally, never both. A minute with tallied starts answers its
 *   percentiles over its jobs' exact latencies and the buckets' middles (weightedPercentileCont);
 *   without, exactly as before. A record drops the tallies of minutes before those it covered,
 *   and the prune those past the retention.
 * - A job deleted otherwise (an operator's delete, the maintainer's prune) before its minute
 *   is recorded is not counted.
 * - `trendsList` answers rows with `from <= minute < to` (of one queue when given), by minute,
 *   then queue in code-point order.
 * - `trendsPrune` deletes at most `limit` rows whose minute is older than `olderThanMs` before
 *   the engine's now, oldest first, and answers how many.
 */
import type { QueueTrendMinute } from '../core/trends.js';

export interface TrendsRecordParams {
  /** How many minutes back (the current one included) a record may reach; at least 1. */
  readonly maxMinutes: number;
}

export interface TrendsRecorded {
  /** The minutes this call covered, oldest first (whole minutes, the current one last). */
  readonly from: Date;
  readonly through: Date;
  /** Rows written (inserted or rewritten). */
  readonly rows: number;
}

export interface TrendsListParams {
  readonly queue?: string;
  readonly from: Date;
  readonly to: Date;
}

export interface TrendsPruneParams {
  readonly olderThanMs: number;
  readonly limit: number;
}

export interface TrendOperations {
  trendsRecord(params: TrendsRecordParams): Promise<TrendsRecorded>;
  trendsList(params: TrendsListParams): Promise<QueueTrendMinute[]>;
  trendsPrune(params: TrendsPruneParams): Promise<number>;
}
