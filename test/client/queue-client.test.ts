// The HTTP queue client against a listening service on PostgreSQL (decision 0242): queues with
// counts and settings, pause and resume (a write key), configure (an admin key; a write key is
// refused `forbidden`, bad input `invalid_argument`), and explain with its dates as Dates;
// waitFor (decision 0249): long polls repeated until the job finishes or the client's timeout.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { QueueClient } from '../../src/client/queue-client.js';
import { JobFailedError, WaitTimeoutError, isLeaseholdError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const WRITE_KEY = 'writer-key-0123456789';
const ADMIN_KEY = 'admin-key-0123456789abc';
const READ_KEY = 'reader-key-0123456789';

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
          waiting: 0,
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

  it('waitFor repeats its long poll until the job finishes, and maps every ending to its typed error', () =>
    withSchema('queue client wait', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({
        lh,
        port: 0,
        apiKeys: [{ name: 'reader', key: READ_KEY, scope: 'read' }],
      });
      try {
        // Long polls of 150 ms: each marks the job once (jobWatch); wait for three of them.
        const client = new QueueClient({ baseUrl: server.url, apiKey: READ_KEY, longPollMs: 150 });
        const q = lh.queue('client-wait');
        const job = await q.enqueue({ n: 2 });
        let polls = 0;
        const counting = lh.on('engine', (call) => {
          if (call.operation === 'jobWatch' && (call.params as { id: number }).id === job.id)
            polls++;
        });
        const waiting = client.waitFor<{ squared: number }>(job.id, { timeout: '20s' });
        await waitFor('a few long polls', () => polls >= 3, { timeoutMs: 10_000 });
        counting();
        await complete(lh, 'client-wait', { squared: 4 });
        assert.deepEqual(await waiting, { squared: 4 });
        assert.deepEqual(await client.waitFor(job.id, { timeout: 0 }), { squared: 4 });

        const doomed = await q.enqueue({});
        const failing = client.waitFor(doomed.id).catch((e: unknown) => e);
        await failClaimed(lh, 'client-wait', 'out of paper');
        const failure = await failing;
        assert.ok(failure instanceof JobFailedError, String(failure));
        assert.deepEqual(
          [failure.code, failure.status, failure.lastError],
          ['job_failed', 'dead', 'out of paper'],
        );

        const idle = await q.enqueue({}, { delay: '1h' });
        const timedOut = await client
          .waitFor(idle.id, { timeout: '400ms' })
          .catch((e: unknown) => e);
        assert.ok(timedOut instanceof WaitTimeoutError, String(timedOut));
        assert.deepEqual(timedOut.details, { jobId: idle.id, status: 'pending', timeoutMs: 400 });
        const controller = new AbortController();
        const aborted = client
          .waitFor(idle.id, { signal: controller.signal })
          .catch((e: unknown) => e);
        setTimeout(() => controller.abort(), 200);
        assert.ok(isLeaseholdError(await aborted, 'aborted'), String(await aborted));
        await lh.jobs.cancel(idle.id);
        await assert.rejects(
          client.waitFor(idle.id),
          (e) => e instanceof JobFailedError && e.status === 'cancelled',
        );

        await assert.rejects(client.waitFor(424242, { timeout: 0 }), (e) =>
          isLeaseholdError(e, 'not_found'),
        );
        for (const [id, options, field] of [
          [idle.id, { timeout: -1 }, 'timeout'],
          [idle.id, { timeout: 'later' }, 'timeout'],
          [0, {}, 'jobId'],
        ] as const)
          await assert.rejects(
            client.waitFor(id, options as { timeout: number }),
            (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === field,
          );
      } finally {
        await server.close();
      }
    }));
});

/** Claims the oldest job of `queue` for `w1` and completes it with `result`. */
async function complete(lh: Leasehold, queue: string, result: unknown): Promise<void> {
  const [job] = await lh.engine.jobClaimBatch({
    queues: [queue],
    workerId: 'w1',
    limit: 1,
    leaseTtlMs: 30_000,
  });
  assert.ok(job);
  await lh.engine.jobComplete({
    workerId: 'w1',
    jobs: [{ id: job.id, generation: job.generation, result }],
  });
}

/** Claims the oldest job of `queue` for `w1` and fails it for good with `error`. */
async function failClaimed(lh: Leasehold, queue: string, error: string): Promise<void> {
  const [job] = await lh.engine.jobClaimBatch({
    queues: [queue],
    workerId: 'w1',
    limit: 1,
    leaseTtlMs: 30_000,
  });
  assert.ok(job);
  await lh.engine.jobFail({
    workerId: 'w1',
    jobs: [{ id: job.id, generation: job.generation, error, retryDelayMs: 0, final: true }],
  });
}
