// The HTTP queue client against a listening service on PostgreSQL (decision 0242): queues with
// counts and settings, pause and resume (a write key), configure (an admin key; a write key is
// refused `forbidden`, bad input `invalid_argument`), and explain with its dates as Dates.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { QueueClient } from '../../src/client/queue-client.js';
import { isLeaseholdError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const WRITE_KEY = 'writer-key-0123456789';
const ADMIN_KEY = 'admin-key-0123456789abc';

describe('queue client', () => {
  it('lists, pauses, resumes, configures and explains through the service', () =>
    withSchema('queue client', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({
        lh,
        port: 0,
        apiKeys: [
          { name: 'writer', key: WRITE_KEY, scope: 'write' },
          { name: 'admin', key: ADMIN_KEY, scope: 'admin' },
        ],
      });
      try {
        const writer = new QueueClient({ baseUrl: server.url, apiKey: WRITE_KEY });
        const admin = new QueueClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
        const job = await lh.queue('emails').enqueue({ n: 1 });

        const paused = await writer.pauseQueue('emails');
        assert.equal(paused.paused, true);
        assert.deepEqual(await writer.explainJob(job.id), { reason: 'paused' });
        const [listed] = await writer.queues();
        assert.equal(listed?.queue, 'emails');
        assert.equal(listed?.paused, true);
        assert.deepEqual(listed?.counts, {
          pending: 1,
          processing: 0,
          completed: 0,
          dead: 0,
          cancelled: 0,
        });
        assert.equal((await writer.resumeQueue('emails')).paused, false);

        await assert.rejects(writer.configureQueue('emails', { concurrency: 2 }), (e: unknown) =>
          isLeaseholdError(e, 'forbidden'),
        );
        const configured = await admin.configureQueue('emails', {
          concurrency: 2,
          rate: { limit: 1, per: '1h' },
        });
        assert.equal(configured.concurrency, 2);
        assert.deepEqual(configured.rate, { limit: 1, per: 3_600_000 });
        await assert.rejects(
          admin.configureQueue('emails', { concurrency: 0 }),
          (e: unknown) => isLeaseholdError(e, 'invalid_argument') && /concurrency/.test(String(e)),
        );
        assert.equal((await lh.queue('emails').settings()).concurrency, 2, 'nothing changed');

        // One start spends the rate's window: the next job waits for its next slot.
        const [claimed] = await lh.engine.jobClaimBatch({
          queues: ['emails'],
          workerId: 'w1',
          limit: 1,
          leaseTtlMs: 30_000,
        });
        assert.equal(claimed?.id, job.id);
        const next = await lh.queue('emails').enqueue({ n: 2 });
        const why = await writer.explainJob(next.id);
        assert.equal(why?.reason, 'rate');
        assert.ok(why?.reason === 'rate' && why.nextSlotAt instanceof Date);
        assert.equal(await writer.explainJob(424242), null);
        const odd = await admin.pauseQueue('a/b c');
        assert.equal(odd.queue, 'a/b c', 'the name is sent encoded');
      } finally {
        await server.close();
      }
    }));
});
