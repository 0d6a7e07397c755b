/**
 * A bulk enqueue (queue.ts enqueueMany) on PostgreSQL: its batches of 1,000 without keys or
 * partition keys are written two at a time, those with either one after another. Either way
 * the answer is every job in input order, each as stored, and a partition's ids follow input
 * order (its jobs become claimable in that order).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Engine } from '../../src/engine/engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { ENQUEUE_BATCH_MAX } from '../../src/queue/queue.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const JOBS = ENQUEUE_BATCH_MAX * 4 + 321;

/** The most enqueue statements the engine ran at once. */
function concurrencyOf(engine: Engine): () => number {
  let running = 0;
  let most = 0;
  const original = engine.jobEnqueue.bind(engine);
  engine.jobEnqueue = async (p) => {
    most = Math.max(most, ++running);
    try {
      return await original(p);
    } finally {
      running--;
    }
  };
  return () => most;
}

describe('enqueueMany on PostgreSQL', () => {
  it('writes batches without keys two at a time and answers every job in input order', () =>
    withSchema('enqueue many overlapped', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine({ poolSize: 4 }));
      const most = concurrencyOf(lh.engine);
      const jobs = await lh
        .queue('bulk')
        .enqueueMany(Array.from({ length: JOBS }, (_, n) => ({ payload: { n } })));
      assert.equal(most(), 2);
      assert.deepEqual(
        jobs.map((j) => (j.payload as { n: number }).n),
        Array.from({ length: JOBS }, (_, n) => n),
      );
      assert.equal(new Set(jobs.map((j) => j.id)).size, JOBS);
      assert.ok(jobs.every((j) => j.created && j.status === 'pending'));
      assert.deepEqual(await lh.engine.jobCounts(), [
        { queue: 'bulk', status: 'pending', count: JOBS },
      ]);
      for (const job of [jobs[0]!, jobs[ENQUEUE_BATCH_MAX]!, jobs[JOBS - 1]!]) {
        const { created: _, replaced: _r, ...answered } = job;
        assert.deepEqual(await lh.engine.jobGet({ id: job.id }), answered);
      }
    }));

  it('writes partitioned batches one after another: ids follow input order', () =>
    withSchema('enqueue many partitioned', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine({ poolSize: 4 }));
      const most = concurrencyOf(lh.engine);
      const jobs = await lh.queue('bulk').enqueueMany(
        Array.from({ length: JOBS }, (_, n) => ({
          payload: { n },
          // One job in the whole call has a partition key: the call is ordered.
          ...(n === JOBS - 1 ? { options: { partitionKey: 'p' } } : {}),
        })),
      );
      assert.equal(most(), 1);
      for (let i = 1; i < jobs.length; i++) assert.ok(jobs[i]!.id > jobs[i - 1]!.id, `id ${i}`);
    }));
});
