import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  PICKUP_BUCKET_COUNT,
  pickupBucket,
  pickupBucketValue,
} from '../../src/core/pickup-buckets.js';
import { percentileCont, weightedPercentileCont } from '../../src/core/trends.js';

describe('pickup latency buckets (decision 0270)', () => {
  it('puts every latency in a bucket whose middle is within 9% of it (or 1 ms), in order', () => {
    let previous = -1;
    for (let ms = 0; ms < 5_000_000; ms = ms < 100 ? ms + 0.25 : ms * 1.01) {
      const bucket = pickupBucket(ms);
      assert.ok(bucket >= previous, `bucket order at ${ms} ms`);
      previous = bucket;
      const middle = pickupBucketValue(bucket);
      assert.ok(
        // A quarter doubling wide in log2(1 + ms): its middle is 2^(1/8) − 1 = 9.05% off at most.
        Math.abs(middle - ms) <= 0.0906 * (1 + ms) + 0.001, // + the µs rounding
        `${ms} ms in bucket ${bucket} (middle ${middle})`,
      );
    }
    assert.equal(pickupBucket(-5), 0, 'a negative latency (clock skew) is 0');
    assert.equal(pickupBucket(Number.MAX_SAFE_INTEGER), PICKUP_BUCKET_COUNT - 1);
  });

  it('interpolates a weighted multiset as percentile_cont does over it expanded', () => {
    const values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];
    for (const p of [0, 0.25, 0.5, 0.9, 0.99, 1]) {
      const ones = values.map((value) => ({ value, weight: 1 }));
      assert.equal(weightedPercentileCont(ones, p), percentileCont(values, p), `p ${p}, weights 1`);
      const counted = new Map<number, number>();
      for (const v of values) counted.set(v, (counted.get(v) ?? 0) + 1);
      const grouped = [...counted].map(([value, weight]) => ({ value, weight }));
      assert.equal(
        weightedPercentileCont(grouped, p),
        percentileCont(values, p),
        `p ${p}, grouped`,
      );
    }
    assert.equal(weightedPercentileCont([], 0.5), null);
    assert.equal(weightedPercentileCont([{ value: 7, weight: 0 }], 0.5), null);
  });
});
