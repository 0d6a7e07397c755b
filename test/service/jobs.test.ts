// Queue administration over HTTP through inject(): list and inspect jobs of any queue, cancel,
// retry and delete, each with its documented refusals, scopes, and bad input answered 400 with
// no state change. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Job } from '../../src/core/types.js';
import type { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase } from '../support/database.js';
import { bearer, call, withApp } from '../support/service.js';

after(closeTestDatabase);

interface JobJson {
  id: number;
  queue: string;
  status: string;
  attempts: number;
  payload: unknown;
  headers: Record<string, string>;
  partitionKey: string | null;
  generation: number;
  lastError: string | null;
  errors: { attempt: number; at: string; error: string }[];
}

const allJobs = (lh: Leasehold) => lh.engine.jobList({ limit: 1000, offset: 0 });

/** Claims the oldest ready job of `queue` for worker `w1`. */
async function claimOne(lh: Leasehold, queue: string): Promise<Job> {
  const [job] = await lh.engine.jobClaimBatch({
    queues: [queue],
    workerId: 'w1',
    limit: 1,
    leaseTtlMs: 30_000,
  });
  assert.ok(job, `a job of ${queue} to claim`);
  return job;
}

describe('job routes', () => {
  it('lists jobs of every queue, newest first, by queue, status and partition key', () =>
    withApp('jobs list', async (app, lh) => {
      const a = await lh.queue('emails').enqueue({ n: 1 }, { partitionKey: 'ada' });
      const b = await lh.queue('emails').enqueue({ n: 2 });
      const c = await lh.queue('reports').enqueue({ n: 3 });
      await claimOne(lh, 'reports');

      const ids = async (query: string): Promise<number[]> => {
        const answer = await call(app, 'GET', `/api/jobs${query}`);
        assert.equal(answer.status, 200, answer.text);
        return (answer.body.jobs as JobJson[]).map((j) => j.id);
      };
      assert.deepEqual(await ids(''), [c.id, b.id, a.id]);
      assert.deepEqual(await ids('?queue=emails'), [b.id, a.id]);
      assert.deepEqual(await ids('?status=processing'), [c.id]);
      assert.deepEqual(await ids('?queue=emails&status=pending&partitionKey=ada'), [a.id]);
      assert.deepEqual(await ids('?limit=1&offset=1'), [b.id]);
      assert.deepEqual(await ids('?queue=nothing'), []);
    }));

  it('gets one job with its payload, headers and attempt history; 404 unknown, 400 malformed', () =>
    withApp('jobs get', async (app, lh) => {
      const enqueued = await lh
        .queue('emails')
        .enqueue({ to: 'ada' }, { headers: { trace: 't-1' }, type: 'send.v1', maxAttempts: 3 });
      const claimed = await claimOne(lh, 'emails');
      await lh.engine.jobFail({
        workerId: 'w1',
        jobs: [
          { id: claimed.id, generation: claimed.generation, error: 'smtp down', retryDelayMs: 0 },
        ],
      });
      const got = await call(app, 'GET', `/api/jobs/${enqueued.id}`);
      assert.equal(got.status, 200);
      const job = got.body as unknown as JobJson;
      assert.deepEqual(job.payload, { to: 'ada' });
      assert.deepEqual(job.headers, { trace: 't-1' });
      assert.equal(job.status, 'pending');
      assert.equal(job.lastError, 'smtp down');
      assert.equal((got.body as { progress?: unknown }).progress, null, 'never reported');
      assert.deepEqual(
        job.errors.map((e) => [e.attempt, e.error]),
        [[1, 'smtp down']],
      );
      assert.deepEqual((got.body as { steps?: unknown }).steps, [], 'no steps recorded yet');

      // A recorded step (ctx.step) is shown with its value and the run that recorded it.
      const again = await claimOne(lh, 'emails');
      await lh.engine.jobStepRun({
        workerId: 'w1',
        ref: { id: again.id, generation: again.generation },
        name: 'charge',
        body: async () => ({ receipt: 'r-1' }),
      });
      const withSteps = await call(app, 'GET', `/api/jobs/${enqueued.id}`);
      assert.equal(withSteps.status, 200, withSteps.text);
      const steps = (withSteps.body as { steps: { recordedAt: string }[] }).steps;
      assert.deepEqual(
        steps.map(({ recordedAt: _recordedAt, ...step }) => step),
        [{ name: 'charge', value: { receipt: 'r-1' }, generation: again.generation }],
      );
      assert.equal(new Date(steps[0]!.recordedAt).toISOString(), steps[0]!.recordedAt);

      const unknown = await call(app, 'GET', '/api/jobs/424242');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error?.code, 'not_found');
      for (const id of ['abc', '1.5', 'true', '-1', '0']) {
        const bad = await call(app, 'GET', `/api/jobs/${id}`);
        assert.equal(bad.status, 400, id);
        assert.equal(bad.body.error?.code, 'invalid_argument', id);
      }
    }));

  it('cancels a pending or running job with 200 (the runner loses its lease), and answers 409 task_done for a finished one, 404 unknown', () =>
    withApp('jobs cancel', async (app, lh) => {
      const pending = await lh.queue('emails').enqueue({ n: 1 });
      const cancelled = await call(app, 'POST', `/api/jobs/${pending.id}/cancel`);
      assert.equal(cancelled.status, 200);
      assert.equal((cancelled.body as unknown as JobJson).status, 'cancelled');
      const again = await call(app, 'POST', `/api/jobs/${pending.id}/cancel`);
      assert.equal(again.status, 200, 'cancelling a cancelled job changes nothing');

      await lh.queue('emails').enqueue({ n: 2 });
      const running = await claimOne(lh, 'emails');
      assert.equal((await call(app, 'POST', `/api/jobs/${running.id}/cancel`)).status, 200);
      const renewed = await lh.engine.jobRenewLeases({
        workerId: 'w1',
        jobs: [{ id: running.id, generation: running.generation }],
        leaseTtlMs: 30_000,
      });
      assert.deepEqual(renewed, [], "the runner's next renewal is refused");

      await lh.queue('emails').enqueue({ n: 3 });
      const done = await claimOne(lh, 'emails');
      await lh.engine.jobComplete({
        workerId: 'w1',
        jobs: [{ id: done.id, generation: done.generation }],
      });
      const finished = await call(app, 'POST', `/api/jobs/${done.id}/cancel`);
      assert.equal(finished.status, 409);
      assert.equal(finished.body.error?.code, 'task_done');
      assert.equal((await lh.engine.jobGet({ id: done.id }))?.status, 'completed');

      const unknown = await call(app, 'POST', '/api/jobs/424242/cancel');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error?.code, 'not_found');
    }));

  it('retries a dead, cancelled or completed job with its attempts reset; 409 conflict for a live job or a live key, 404 unknown', () =>
    withApp('jobs retry', async (app, lh) => {
      await lh.queue('emails').enqueue({ n: 'dead' }, { maxAttempts: 1 });
      const dying = await claimOne(lh, 'emails');
      await lh.engine.jobFail({
        workerId: 'w1',
        jobs: [{ id: dying.id, generation: dying.generation, error: 'x', retryDelayMs: 0 }],
      });
      assert.equal((await lh.engine.jobGet({ id: dying.id }))?.status, 'dead');
      const retried = await call(app, 'POST', `/api/jobs/${dying.id}/retry`);
      assert.equal(retried.status, 200);
      const job = retried.body as unknown as JobJson;
      assert.equal(job.status, 'pending');
      assert.equal(job.attempts, 0);

      const live = await call(app, 'POST', `/api/jobs/${dying.id}/retry`);
      assert.equal(live.status, 409);
      assert.equal(live.body.error?.code, 'conflict', 'a pending job cannot be retried');

      const keyed = await lh.queue('emails').enqueue({ n: 'first' }, { key: 'welcome' });
      await lh.engine.jobCancel({ id: keyed.id });
      const successor = await lh.queue('emails').enqueue({ n: 'second' }, { key: 'welcome' });
      assert.notEqual(successor.id, keyed.id);
      const clash = await call(app, 'POST', `/api/jobs/${keyed.id}/retry`);
      assert.equal(clash.status, 409);
      assert.equal(clash.body.error?.code, 'conflict', 'a live job already has its key');
      assert.equal((await lh.engine.jobGet({ id: keyed.id }))?.status, 'cancelled');

      const unknown = await call(app, 'POST', '/api/jobs/424242/retry');
      assert.equal(unknown.status, 404);
    }));

  it('deletes a job that is not running with the admin scope only; 409 conflict for a running job, 404 unknown', () =>
    withApp(
      'jobs delete',
      async (app, lh) => {
        const writer = bearer('writer-key-0123456789');
        const admin = bearer('admin-key-0123456789');
        const pending = await lh.queue('emails').enqueue({ n: 1 });
        const forbidden = await call(app, 'DELETE', `/api/jobs/${pending.id}`, undefined, writer);
        assert.equal(forbidden.status, 403);
        assert.equal(forbidden.body.error?.code, 'forbidden');
        assert.ok(await lh.engine.jobGet({ id: pending.id }), 'still there');

        const deleted = await call(app, 'DELETE', `/api/jobs/${pending.id}`, undefined, admin);
        assert.equal(deleted.status, 200);
        assert.deepEqual(deleted.body, { deleted: pending.id });
        assert.equal(await lh.engine.jobGet({ id: pending.id }), null);

        await lh.queue('emails').enqueue({ n: 2 });
        const running = await claimOne(lh, 'emails');
        const refused = await call(app, 'DELETE', `/api/jobs/${running.id}`, undefined, admin);
        assert.equal(refused.status, 409);
        assert.equal(refused.body.error?.code, 'conflict');
        assert.equal((await lh.engine.jobGet({ id: running.id }))?.status, 'processing');

        const unknown = await call(app, 'DELETE', `/api/jobs/${pending.id}`, undefined, admin);
        assert.equal(unknown.status, 404);
        assert.equal(unknown.body.error?.code, 'not_found');
      },
      {
        apiKeys: [
          { name: 'writer', key: 'writer-key-0123456789', scope: 'write' },
          { name: 'admin', key: 'admin-key-0123456789', scope: 'admin' },
        ],
      },
    ));

  it('rejects bad input with 400, a stable code and no state change', () =>
    withApp('jobs bad input', async (app, lh) => {
      const job = await lh.queue('emails').enqueue({ n: 1 });
      await lh.queue('emails').enqueue({ n: 2 }, { maxAttempts: 1 });
      await claimOne(lh, 'emails');
      const before = await allJobs(lh);
      const cases: [string, string, string][] = [
        ['unknown status', 'GET', '/api/jobs?status=finished'],
        ['empty queue name', 'GET', '/api/jobs?queue='],
        ['over-long queue name', 'GET', `/api/jobs?queue=${'q'.repeat(257)}`],
        ['limit too large', 'GET', '/api/jobs?limit=1001'],
        ['limit not a number', 'GET', '/api/jobs?limit=ten'],
        ['negative offset', 'GET', '/api/jobs?offset=-5'],
        ['unknown query field', 'GET', '/api/jobs?sort=id'],
        ['malformed id on retry', 'POST', '/api/jobs/abc/retry'],
        ['fractional id on cancel', 'POST', `/api/jobs/${job.id}.9/cancel`],
        ['boolean id on delete', 'DELETE', '/api/jobs/true'],
        ['hexadecimal id on cancel', 'POST', '/api/jobs/0x1/cancel'],
        ['id beyond the safe integers', 'POST', '/api/jobs/9007199254740993/cancel'],
      ];
      for (const [what, method, url] of cases) {
        const answer = await call(app, method, url);
        assert.equal(answer.status, 400, `${what}: status (${answer.text})`);
        assert.equal(answer.body.error?.code, 'invalid_argument', `${what}: code`);
        assert.ok(answer.body.error?.message, `${what}: message`);
      }
      assert.deepEqual(await allJobs(lh), before, 'nothing changed');
    }));
});
