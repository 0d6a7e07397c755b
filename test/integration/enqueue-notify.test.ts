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
import { LIVENESS_MS } from '../support/wait.js';

after(closeTestDatabase);

const job = (queue: string) => ({ queue, payload: { n: 1 }, maxAttempts: 1 });

/**
 * Everything heard until a marker sent now arrives. Notifications are delivered in commit
 * order, so the marker comes after every notification committed before it was sent.
 */
async function heardBefore(
  heard: EventQueue<string>,
  send: (payload: string) => Promise<void>,
): Promise<string[]> {
  const MARKER = '~marker';
  await send(MARKER);
  const before: string[] = [];
  for (;;) {
    const payload = await heard.next(LIVENESS_MS, 'the marker');
    if (payload === MARKER) return before;
    before.push(payload);
  }
}

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

      const notified = await heardBefore(heard, (payload) =>
        listener.notifySend({ topic: JOBS_TOPIC, payload }),
      );
      assert.deepEqual([...new Set(notified)].sort(), [...new Set(queues)].sort());
      assert.ok(
        notified.length < queues.length,
        `${notified.length} notifications for ${queues.length} enqueues`,
      );
    }));

  it('notifies inline for a lone enqueue and for one in a caller transaction', () =>
    withSchema('enqueue notify inline', async (schema) => {
      const engine = await schema.engine({ poolSize: 2 });
      const listener = await schema.engine({ poolSize: 1 });
      const heard = new EventQueue<string>();
      await listener.notifyListen({ topic: JOBS_TOPIC, onNotify: heard.push });

      await engine.jobEnqueue({ jobs: [job('alone')] });
      assert.equal(await heard.next(LIVENESS_MS, 'the lone enqueue'), 'alone');

      const client = await engine.pool.connect();
      try {
        await client.query('BEGIN');
        await engine.jobEnqueue({ jobs: [job('in-tx')], tx: client });
        const beforeCommit = await heardBefore(heard, (payload) =>
          listener.notifySend({ topic: JOBS_TOPIC, payload }),
        );
        assert.deepEqual(beforeCommit, [], 'nothing before the caller commits');
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      assert.equal(await heard.next(LIVENESS_MS, 'the committed enqueue'), 'in-tx');
    }));
});
