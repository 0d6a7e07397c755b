// Bad enqueue input is refused with invalid_argument naming the field, and writes nothing;
// a hot partition key shards into stable, ordered sub-keys.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isLeaseholdError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import type { EnqueueOptions } from '../../src/queue/enqueue-options.js';
import { shardedPartitionKey } from '../../src/queue/partition-shard.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const BAD: [string, unknown, EnqueueOptions, string][] = [
  ['undefined payload', undefined, {}, 'payload'],
  ['a function as payload', () => 1, {}, 'payload'],
  ['a payload over 1 MiB', 'x'.repeat(1024 * 1024 + 1), {}, 'payload'],
  ['NUL in the payload', { text: 'a\u0000b' }, {}, 'payload'],
  ['maxAttempts 0', {}, { maxAttempts: 0 }, 'maxAttempts'],
  ['maxAttempts 1.5', {}, { maxAttempts: 1.5 }, 'maxAttempts'],
  ['maxAttempts too large', {}, { maxAttempts: 1_000_001 }, 'maxAttempts'],
  ['an empty key', {}, { key: '' }, 'key'],
  ['a key of 257 characters', {}, { key: 'k'.repeat(257) }, 'key'],
  ['a numeric partition key', {}, { partitionKey: 7 as never }, 'partitionKey'],
  ['a fractional priority', {}, { priority: 0.5 }, 'priority'],
  ['a negative delay', {}, { delay: -1 }, 'delay'],
  ['an unreadable delay', {}, { delay: 'soon' }, 'delay'],
  ['an invalid runAt', {}, { runAt: new Date('nope') }, 'runAt'],
  ['both runAt and delay', {}, { runAt: new Date(), delay: 5 }, 'runAt'],
  ['non-string header values', {}, { headers: { n: 1 as never } }, 'headers.n'],
  ['an array of headers', {}, { headers: [] as never }, 'headers'],
  ['a zero timeout', {}, { timeout: 0 }, 'timeout'],
  ['a negative timeout', {}, { timeout: -5 }, 'timeout'],
  ['a timeout that rounds to 0 ms', {}, { timeout: 0.4 }, 'timeout'],
  ['an unreadable timeout', {}, { timeout: 'soon' }, 'timeout'],
  ['a null timeout', {}, { timeout: null as never }, 'timeout'],
  ['a timeout above 7 days', {}, { timeout: '8d' }, 'timeout'],
];

describe('enqueue input validation', () => {
  for (const engineName of ['memory', 'postgres'] as const) {
    it(`refuses every bad input on ${engineName}, naming the field and writing nothing`, async () => {
      const run = async (lh: Leasehold): Promise<void> => {
        for (const [what, payload, options, field] of BAD) {
          await assert.rejects(
            lh.queue('q').enqueue(payload, options),
            (e: unknown) => isLeaseholdError(e, 'invalid_argument') && e.details['field'] === field,
            what,
          );
        }
        // One bad job anywhere in a batch refuses the whole batch, naming its index.
        await assert.rejects(
          lh.queue('q').enqueueMany([{ payload: 1 }, { payload: 2, options: { priority: 0.5 } }]),
          (e: unknown) =>
            isLeaseholdError(e, 'invalid_argument') && e.details['field'] === 'jobs[1].priority',
        );
        await assert.rejects(
          lh.queue('q').enqueueMany([{ payload: 1, options: { timeout: -1 } }, { payload: 2 }]),
          (e: unknown) =>
            isLeaseholdError(e, 'invalid_argument') && e.details['field'] === 'jobs[0].timeout',
        );
        assert.throws(
          () => lh.queue(''),
          (e: unknown) => isLeaseholdError(e, 'invalid_argument') && e.details['field'] === 'queue',
        );
        assert.deepEqual(await lh.engine.jobCounts(), [], 'nothing was written');
      };
      if (engineName === 'memory') await run(Leasehold.memory());
      else
        await withSchema('enqueue validation', async (schema) =>
          run(Leasehold.fromEngine(await schema.engine())),
        );
    });
  }

  it('refuses a caller transaction on an engine that cannot join one', async () => {
    const lh = Leasehold.memory();
    await assert.rejects(
      lh.queue('q').enqueue({}, { tx: { query: async () => ({ rows: [] }) } }),
      (e: unknown) => isLeaseholdError(e, 'unsupported'),
    );
  });
});

describe('shardedPartitionKey', () => {
  it('maps an entity to the same sub-key every time, spreading entities over n sub-keys', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const key = shardedPartitionKey('customer-42', `order-${i}`, 8);
      assert.equal(key, shardedPartitionKey('customer-42', `order-${i}`, 8));
      assert.match(key, /^customer-42#[0-7]$/);
      seen.add(key);
    }
    assert.equal(seen.size, 8, 'all eight sub-keys are used');
    assert.throws(
      () => shardedPartitionKey('k', 'e', 0),
      (e: unknown) => isLeaseholdError(e, 'invalid_argument'),
    );
  });
});
