/**
 * Single enqueues that overlap in one process share a multi-row statement (queue.ts,
 * runtime/coalescer.ts): each still resolves with its own committed job, in arrival order, and
 * a repeated dedup key answers as the calls one after another would. On PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Engine } from '../../src/engine/engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

/** Counts the engine's enqueue statements and the jobs they carried. */
function countEnqueues(engine: Engine): { calls: number; jobs: number } {
  const seen = { calls: 0, jobs: 0 };
  const original = engine.jobEnqueue.bind(engine);
  engine.jobEnqueue = (p) => {
    seen.calls++;
    seen.jobs += p.jobs.length;
    return original(p);
  };
  return seen;
}

describe('overlapping single enqueues', () => {
  it('share statements, and each caller gets its own committed job in arrival order', () =>
    withSchema('enqueue coalesced', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine({ poolSize: 4 }));
      const seen = countEnqueues(lh.engine);
      const queue = lh.queue('orders');
      const jobs = await Promise.all(
        Array.from({ length: 40 }, (_, n) =>
          queue.enqueue({ n }, n % 4 === 0 ? { partitionKey: 'p' } : {}),
        ),
      );
      assert.deepEqual(
        jobs.map((j) => (j.payload as { n: number }).n),
        Array.from({ length: 40 }, (_, n) => n),
      );
      assert.ok(jobs.every((j) => j.created && j.status === 'pending'));
      // Arrival order is id order, so a partition's jobs run in the order they were enqueued.
      const ids = jobs.map((j) => j.id);
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        ids,
      );
      assert.equal(new Set(ids).size, 40);
      const counts = await lh.engine.jobCounts();
      assert.equal(counts.find((c) => c.queue === 'orders' && c.status === 'pending')?.count, 40);
      assert.equal(seen.jobs, 40);
      assert.ok(seen.calls < 40, `every enqueue had its own statement (${seen.calls})`);
    }));

  it('answers a repeated dedup key as one job, created once', () =>
    withSchema('enqueue coalesced keys', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine({ poolSize: 4 }));
      const queue = lh.queue('mail');
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, n) => queue.enqueue({ n }, { key: 'welcome:42' })),
      );
      assert.equal(answers.filter((a) => a.created).length, 1);
      assert.equal(new Set(answers.map((a) => a.id)).size, 1);
      assert.deepEqual(answers[0]!.payload, { n: 0 });
    }));
});
