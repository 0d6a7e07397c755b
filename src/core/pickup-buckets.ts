/**
 * Pickup latencies of jobs deleted as they completed (`removeOnComplete`, `removeOnAck`), kept
 * for the trends as counts per bucket instead of one value per job (decision 0270): the
 * deleting statement adds each job to the bucket of its latency, and the trends read a bucket
 * as its geometric middle (in 1 + ms). Four buckets per doubling keep a bucket's middle within
 * 9.05% of (1 ms + any latency in it); 128 buckets reach 2^32 ms (49 days), the last one
 * holding everything beyond. Both engines compute the bucket with the same float8 steps.
 */
import { roundToMicros } from './trends.js';

export const PICKUP_BUCKETS_PER_DOUBLING = 4;
export const PICKUP_BUCKET_COUNT = 128;

/**
 * The bucket of a pickup latency in ms: floor(4 · ln(1 + ms) / ln 2), within [0, 127]. Written
 * as PostgreSQL computes it in float8 (a numeric log2 there cost a third of the deleting
 * burn-down's throughput); the two may disagree only for a latency on a bucket's very edge.
 */
export function pickupBucket(ms: number): number {
  const bucket = Math.floor(
    (PICKUP_BUCKETS_PER_DOUBLING * Math.log(1 + Math.max(0, ms))) / Math.LN2,
  );
  return Math.min(PICKUP_BUCKET_COUNT - 1, bucket);
}

/** The latency a bucket stands for: its geometric middle, in ms rounded to the microsecond. */
export function pickupBucketValue(bucket: number): number {
  return roundToMicros(2 ** ((bucket + 0.5) / PICKUP_BUCKETS_PER_DOUBLING) - 1);
}
