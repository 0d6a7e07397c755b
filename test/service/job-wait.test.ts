// GET /api/jobs/:id/wait, the long poll of decision 0249, through inject() on PostgreSQL: it
// answers `done: true` with the job once it finishes (at once when it already has), `done: false`
// with the job as it is when its timeout passes or the server closes, past the reply deadline;
// 404 not_found for an unknown job, 400 invalid_argument naming `timeout` for a bad one; the
// read scope suffices.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait.js';
import { SCOPED_API_KEYS, SCOPED_KEYS, bearer, call, withApp } from '../support/service.js';

after(closeTestDatabase);

interface WaitJson {
  done: boolean;
  job: { id: number; status: string; result: unknown; lastError: string | null };
}

const reader = bearer(SCOPED_KEYS.read);

/** Claims job `id` (the oldest of its queue) for `w1` and completes or fails it for good. */
async function finish(
  lh: Leasehold,
  queue: string,
  outcome: { result: unknown } | { error: string },
) {
  const [job] = await lh.engine.jobClaimBatch({
    queues: [queue],
    workerId: 'w1',
    limit: 1,
    leaseTtlMs: 30_000,
  });
  assert.ok(job);
  const ref = { id: job.id, generation: job.generation };
  if ('result' in outcome)
    await lh.engine.jobComplete({ workerId: 'w1', jobs: [{ ...ref, result: outcome.result }] });
  else
    await lh.engine.jobFail({
      workerId: 'w1',
      jobs: [{ ...ref, error: outcome.error, retryDelayMs: 0, final: true }],
    });
}

/** Resolves once job `id` has been marked as waited for (the jobWatch call settled). */
async function watched(lh: Leasehold, id: number): Promise<void> {
  let seen = false;
  const off = lh.on('engine', (call) => {
    if (call.operation === 'jobWatch' && (call.params as { id: number }).id === id) seen = true;
  });
  await waitFor('the wait to mark its job', () => seen);
  off();
}

describe('GET /api/jobs/:id/wait', () => {
  it('answers done: true with the finished job, a completed one or a dead one, and at once when already finished', () =>
    withApp(
      'job wait done',
      async (app, lh) => {
        const queued = await lh.queue('reports').enqueue({ n: 1 });
        const marked = watched(lh, queued.id);
        const waiting = call(
          app,
          'GET',
          `/api/jobs/${queued.id}/wait?timeout=20s`,
          undefined,
          reader,
        );
        await marked; // the long poll waits (its job marked as waited for) before the job finishes
        await finish(lh, 'reports', { result: { rows: 3 } });
        const answer = await waiting;
        assert.equal(answer.status, 200, answer.text);
        const body = answer.body as unknown as WaitJson;
        assert.equal(body.done, true);
        assert.deepEqual(
          [body.job.id, body.job.status, body.job.result],
          [queued.id, 'completed', { rows: 3 }],
        );

        const again = await call(app, 'GET', `/api/jobs/${queued.id}/wait`, undefined, reader);
        assert.equal((again.body as unknown as WaitJson).done, true, 'finished already: at once');

        const doomed = await lh.queue('doomed').enqueue({});
        const dead = call(
          app,
          'GET',
          `/api/jobs/${doomed.id}/wait?timeout=20000`,
          undefined,
          reader,
        );
        await finish(lh, 'doomed', { error: 'disk full' });
        const deadBody = (await dead).body as unknown as WaitJson;
        assert.deepEqual(
          [deadBody.done, deadBody.job.status, deadBody.job.lastError],
          [true, 'dead', 'disk full'],
        );
      },
      { apiKeys: SCOPED_API_KEYS },
    ));

  it('answers done: false with the job as it is at its timeout, past the reply deadline, or when the server closes', () =>
    withApp(
      'job wait timeout',
      async (app, lh) => {
        const queued = await lh.queue('later').enqueue({}, { delay: '1h' });
        // 600 ms, longer than the 200 ms reply deadline: the long poll extends its own.
        const answer = await call(app, 'GET', `/api/jobs/${queued.id}/wait?timeout=600ms`);
        assert.equal(answer.status, 200, answer.text);
        const body = answer.body as unknown as WaitJson;
        assert.deepEqual([body.done, body.job.id, body.job.status], [false, queued.id, 'pending']);
        const once = await call(app, 'GET', `/api/jobs/${queued.id}/wait?timeout=0`);
        assert.equal((once.body as unknown as WaitJson).done, false);

        // An hour is accepted (cut to the server's maximum); closing the server ends the wait.
        // Closed once the wait has marked its job (it is then waiting), not after a guessed sleep.
        let watching = false;
        const off = lh.on('engine', (c) => {
          if (c.operation === 'jobWatch') watching = true;
        });
        const long = call(app, 'GET', `/api/jobs/${queued.id}/wait?timeout=1h`);
        await waitFor('the long poll to wait', () => watching);
        off();
        await app.close();
        const closed = await long;
        assert.equal(closed.status, 200, closed.text);
        assert.equal((closed.body as unknown as WaitJson).done, false);
        assert.equal((await lh.jobs.get(queued.id))?.status, 'pending', 'the job is untouched');
      },
      { replyTimeoutMs: 200 },
    ));

  it('refuses an unknown job with 404 not_found, a bad timeout or id with 400 naming it, and no key with 401', () =>
    withApp(
      'job wait refusals',
      async (app, lh) => {
        const queued = await lh.queue('q').enqueue({});
        const before = await lh.jobs.get(queued.id);
        const unknown = await call(
          app,
          'GET',
          '/api/jobs/999999/wait?timeout=0',
          undefined,
          reader,
        );
        assert.equal(unknown.status, 404);
        assert.equal(unknown.body.error?.code, 'not_found');
        for (const timeout of ['-1', 'soon', '-5s']) {
          const bad = await call(
            app,
            'GET',
            `/api/jobs/${queued.id}/wait?timeout=${timeout}`,
            undefined,
            reader,
          );
          assert.equal(bad.status, 400, timeout);
          assert.equal(bad.body.error?.code, 'invalid_argument');
          assert.match(bad.body.error?.message ?? '', /timeout/);
        }
        const badId = await call(app, 'GET', '/api/jobs/0/wait', undefined, reader);
        assert.equal(badId.status, 400);
        assert.equal(badId.body.error?.code, 'invalid_argument');
        const extra = await call(
          app,
          'GET',
          `/api/jobs/${queued.id}/wait?wait=1`,
          undefined,
          reader,
        );
        assert.equal(extra.status, 400);
        const anonymous = await call(app, 'GET', `/api/jobs/${queued.id}/wait?timeout=0`);
        assert.equal(anonymous.status, 401);
        assert.deepEqual(await lh.jobs.get(queued.id), before, 'nothing changed');
      },
      { apiKeys: SCOPED_API_KEYS },
    ));
});
