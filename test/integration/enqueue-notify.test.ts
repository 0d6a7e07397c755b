/**
 * Enqueues that overlap on one engine commit without NOTIFY and are announced after commit by
 * one coalesced statement (notify-coalescer.ts): a NOTIFY inside each transaction would
 * serialise their commits. Every queue that got a job must still be announced, and a lone
 * enqueue, or one in a caller's transaction, still notifies inline.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { JOBS_TOPIC } from '../../src/engine/jobs.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EventQueue } from '../support/events.js';

after(closeTestDatabase);

const job = (queue: string) => ({ queue, payload: { n: 1 }, maxAttempts: 1 });

describe('job notifications of concurrent enqueues', () => {
  it('announces every queue of 40 overlapping enqueues, with fewer notifications than enqueues', () =>
    withSchema('enqueue notify coalesced', async (schema) => {
      const engine = await schema.engine({ poolSize: 8 });
      const listener = await schema.engine({ poolSize: 1 });
      const heard = new EventQueue<string>();
      await listener.notifyListen({ topic: JOBS_TOPIC, onNotify: heard.push });

      const queues = Array.from({ length: 40 }, (_, i) => `q${i % 10}`);
      await Promise.all(queues.map((q) => engine.jobEnqueue({ jobs: [job(q)] })));
      await engine.close(); // sends what it still owes before closing

      const announced = new Set<string>();
      while (announced.size < 10) announced.add(await heard.next(5_000, 'a queue announced'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const total = 10 + heard.length;
      assert.deepEqual([...announced].sort(), [...new Set(queues)].sort());
      assert.ok(total < queues.length, `${total} notifications for ${queues.length} enqueues`);
    }));

  it('notifies inline for a lone enqueue and for one in a caller transaction', () =>
    withSchema('enqueue notify inline', async (schema) => {
      const engine = await schema.engine({ poolSize: 2 });
      const listener = await schema.engine({ poolSize: 1 });
      const heard = new EventQueue<string>();
      await listener.notifyListen({ topic: JOBS_TOPIC, onNotify: heard.push });

      await engine.jobEnqueue({ jobs: [job('alone')] });
      assert.equal(await heard.next(2_000, 'the lone enqueue'), 'alone');

      const client = await engine.pool.connect();
      try {
        await client.query('BEGIN');
        await engine.jobEnqueue({ jobs: [job('in-tx')], tx: client });
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(heard.length, 0, 'nothing before the caller commits');
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      assert.equal(await heard.next(2_000, 'the committed enqueue'), 'in-tx');
    }));
});
