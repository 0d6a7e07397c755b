// The task routes through inject(): create, list, claim, heartbeat, complete, fail, release,
// cancel and retry, each with its documented refusals; the fencing of a claim that expired and
// moved to another processor; and bad input answered 4xx with no state change. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Leasehold } from '../../src/leasehold.js';
import { QUEUE_LIMITS } from '../../src/queue/enqueue-options.js';
import { TypedEvents } from '../../src/runtime/events.js';
import type { ServiceEventMap } from '../../src/service/context.js';
import { closeTestDatabase } from '../support/database.js';
import { call, withApp, type Json } from '../support/service.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

interface TaskJson {
  id: number;
  task_data: unknown;
  status: string;
  processor: string | null;
  token: number;
  attempts: number;
  max_attempts: number;
  scheduled_at: string;
  started_at: string | null;
  must_heartbeat_before: string | null;
  processed_at: string | null;
  task_output: unknown;
  last_error: string | null;
}

const task = (body: Json): TaskJson => body as unknown as TaskJson;

async function create(app: FastifyInstance, body: Record<string, unknown>): Promise<TaskJson> {
  const answer = await call(app, 'POST', '/api/tasks', body);
  assert.equal(answer.status, 201, answer.text);
  return task(answer.body);
}

async function claim(
  app: FastifyInstance,
  processor: string,
  leaseSeconds?: number,
): Promise<TaskJson> {
  const answer = await call(app, 'POST', '/api/tasks/next', {
    processor,
    ...(leaseSeconds === undefined ? {} : { lease_seconds: leaseSeconds }),
  });
  assert.equal(answer.status, 200, answer.text);
  return task(answer.body);
}

/** Every job of the schema, as stored: what "no state change" is checked against. */
const allJobs = (lh: Leasehold) => lh.engine.jobList({ limit: 1000, offset: 0 });

describe('task routes', () => {
  it('creates a task with 201, answers the live task of the same key with 200, and gets it by id', () =>
    withApp('tasks create', async (app, lh) => {
      const created = await create(app, { task_data: { sleep_duration_seconds: 1 } });
      assert.equal(created.status, 'pending');
      assert.deepEqual(created.task_data, { sleep_duration_seconds: 1 });
      assert.equal(created.processor, null);
      assert.equal(created.processed_at, null);
      // The library's default since decision 0231 (the route had its own 5 before).
      assert.equal(created.max_attempts, QUEUE_LIMITS.maxAttemptsDefault);
      assert.equal(created.max_attempts, 10);

      const keyed = await create(app, { task_data: { n: 1 }, key: 'once', max_attempts: 2 });
      const again = await call(app, 'POST', '/api/tasks', { task_data: { n: 2 }, key: 'once' });
      assert.equal(again.status, 200, 'the live task with that key');
      assert.equal(task(again.body).id, keyed.id);
      assert.deepEqual(task(again.body).task_data, { n: 1 });

      const got = await call(app, 'GET', `/api/tasks/${created.id}`);
      assert.equal(got.status, 200);
      assert.equal(task(got.body).id, created.id);

      const unknown = await call(app, 'GET', '/api/tasks/424242');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error?.code, 'not_found');
      const other = await lh.queue('emails').enqueue({ to: 'ada' });
      const otherQueue = await call(app, 'GET', `/api/tasks/${other.id}`);
      assert.equal(otherQueue.status, 404, "another queue's job is not a task");
      // Only the canonical spelling of an id is read as one: `1.5`, `true` or `0x1` is no task 1.
      for (const id of ['abc', `${created.id}.5`, `${created.id}.0`, 'true', '0x1', '1e0']) {
        const malformed = await call(app, 'GET', `/api/tasks/${id}`);
        assert.equal(malformed.status, 400, id);
        assert.equal(malformed.body.error?.code, 'invalid_argument', id);
      }
    }));

  it('replaces or debounces the live task of a key when on_conflict or debounce asks (200, replaced true), and refuses bad ones with 400 naming the field', () =>
    withApp('tasks replace', async (app) => {
      const first = await create(app, { task_data: { n: 1 }, key: 'k', debounce: '1m' });
      const kept = await call(app, 'POST', '/api/tasks', { task_data: { n: 2 }, key: 'k' });
      assert.equal(kept.status, 200);
      assert.deepEqual([kept.body.replaced, task(kept.body).task_data], [false, { n: 1 }]);
      const replaced = await call(app, 'POST', '/api/tasks', {
        task_data: { n: 3 },
        key: 'k',
        on_conflict: 'replace',
      });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(replaced.body.replaced, true);
      assert.equal(task(replaced.body).id, first.id);
      assert.deepEqual(task(replaced.body).task_data, { n: 3 });
      assert.ok(Date.parse(task(replaced.body).scheduled_at) < Date.parse(first.scheduled_at));
      const debounced = await call(app, 'POST', '/api/tasks', {
        task_data: { n: 4 },
        key: 'k',
        debounce: 60_000,
      });
      assert.deepEqual([debounced.status, debounced.body.replaced], [200, true]);
      assert.equal(task(debounced.body).id, first.id);

      for (const [body, field] of [
        [{ task_data: {}, debounce: '1s' }, 'debounce'],
        [{ task_data: {}, key: 'k', debounce: 'soon' }, 'debounce'],
        [
          { task_data: {}, key: 'k', debounce: '1s', scheduled_at: '2030-01-01T00:00:00Z' },
          'debounce',
        ],
        [{ task_data: {}, on_conflict: 'replace' }, 'on_conflict'],
        [{ task_data: {}, key: 'k', debounce: '1s', on_conflict: 'keep' }, 'on_conflict'],
      ] as const) {
        const refused = await call(app, 'POST', '/api/tasks', body);
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.body.error?.code, 'invalid_argument');
        assert.match(refused.body.error?.message ?? '', new RegExp(`^${field}: `), refused.text);
      }
      const unknown = await call(app, 'POST', '/api/tasks', {
        task_data: {},
        key: 'k',
        on_conflict: 'merge',
      });
      assert.deepEqual([unknown.status, unknown.body.error?.code], [400, 'invalid_argument']);
      const stored = await call(app, 'GET', `/api/tasks/${first.id}`);
      assert.deepEqual(task(stored.body).task_data, { n: 4 }, 'the refusals changed nothing');
    }));

  it('lists all, processed and started tasks, with paging', () =>
    withApp('tasks lists', async (app) => {
      const a = await create(app, { task_data: { n: 'a' } });
      await create(app, { task_data: { n: 'b' } });
      await create(app, { task_data: { n: 'c' } });
      const first = await claim(app, 'p1');
      assert.equal(first.id, a.id, 'oldest first');
      await claim(app, 'p1');
      const done = await call(app, 'PUT', `/api/tasks/${first.id}/complete`, {
        processor: 'p1',
        token: first.token,
        task_output: { ok: true },
      });
      assert.equal(done.status, 202);

      const ids = async (path: string): Promise<unknown[]> =>
        ((await call(app, 'GET', path)).body.tasks as TaskJson[]).map((t) => t.task_data);
      assert.deepEqual(await ids('/api/tasks'), [{ n: 'c' }, { n: 'b' }, { n: 'a' }]);
      assert.deepEqual(await ids('/api/tasks/processed'), [{ n: 'a' }]);
      assert.deepEqual(await ids('/api/tasks/started'), [{ n: 'b' }]);
      assert.deepEqual(await ids('/api/tasks?limit=1&offset=1'), [{ n: 'b' }]);
      for (const query of [
        'limit=0',
        'limit=abc',
        'limit=1.5',
        'limit=true',
        'limit=0x10',
        'limit=1&limit=2',
        'offset=-1',
        'status=pending',
      ]) {
        const bad = await call(app, 'GET', `/api/tasks?${query}`);
        assert.equal(bad.status, 400, query);
        assert.equal(bad.body.error?.code, 'invalid_argument', query);
      }
    }));

  it('claims the earliest scheduled task with 200 and its token, and answers 204 when none is ready', () =>
    withApp('tasks next', async (app) => {
      const none = await call(app, 'POST', '/api/tasks/next', { processor: 'p1' });
      assert.equal(none.status, 204);
      assert.equal(none.text, '');

      const later = await create(app, {
        task_data: { n: 'later' },
        scheduled_at: new Date(Date.now() - 1_000).toISOString(),
      });
      const earlier = await create(app, {
        task_data: { n: 'earlier' },
        scheduled_at: new Date(Date.now() - 60_000).toISOString(),
      });
      await create(app, {
        task_data: { n: 'future' },
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      });
      const got = await claim(app, 'p1', 5);
      assert.equal(got.id, earlier.id, 'scheduled earlier runs first');
      assert.equal(got.status, 'processing');
      assert.equal(got.processor, 'p1');
      assert.equal(got.token, 1);
      assert.equal(got.attempts, 1);
      assert.ok(got.started_at);
      const deadline = Date.parse(got.must_heartbeat_before!) - Date.parse(got.started_at);
      assert.ok(Math.abs(deadline - 5_000) < 50, `lease of 5 s, got ${deadline} ms`);

      assert.equal((await claim(app, 'p2')).id, later.id);
      const empty = await call(app, 'POST', '/api/tasks/next', { processor: 'p3' });
      assert.equal(empty.status, 204, 'a task scheduled in the future is not ready');
    }));

  it('heartbeats with 202 and a new deadline; 409 lease_lost for a stale token or another processor, 409 task_done when finished, 404 unknown', () =>
    withApp('tasks heartbeat', async (app) => {
      const created = await create(app, { task_data: {} });
      const claimed = await claim(app, 'p1', 2);
      const url = `/api/tasks/${created.id}/heartbeat`;

      const beat = await call(app, 'PUT', url, {
        processor: 'p1',
        token: claimed.token,
        lease_seconds: 60,
      });
      assert.equal(beat.status, 202);
      assert.equal(beat.body.id, created.id);
      assert.equal(beat.body.token, claimed.token);
      assert.ok(
        Date.parse(beat.body.must_heartbeat_before as string) >
          Date.parse(claimed.must_heartbeat_before!),
        'the deadline moved on',
      );
      const seedStyle = await call(app, 'PUT', url, { processor: 'p1' });
      assert.equal(seedStyle.status, 202, 'a client without tokens is matched to its own claim');

      for (const [what, body] of [
        ['stale token', { processor: 'p1', token: claimed.token + 1 }],
        ['another processor', { processor: 'p2', token: claimed.token }],
        ['another processor without a token', { processor: 'p2' }],
      ] as const) {
        const refused = await call(app, 'PUT', url, body);
        assert.equal(refused.status, 409, what);
        assert.equal(refused.body.error?.code, 'lease_lost', what);
      }

      const unknown = await call(app, 'PUT', '/api/tasks/424242/heartbeat', { processor: 'p1' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error?.code, 'not_found');

      await call(app, 'PUT', `/api/tasks/${created.id}/complete`, {
        processor: 'p1',
        token: claimed.token,
      });
      const finished = await call(app, 'PUT', url, { processor: 'p1', token: claimed.token });
      assert.equal(finished.status, 409);
      assert.equal(finished.body.error?.code, 'task_done');
    }));

  it('completes with 202 and the output; 409 lease_lost for a stale token or another processor, 409 task_done the second time, 404 unknown', () =>
    withApp('tasks complete', async (app, lh) => {
      const created = await create(app, { task_data: {} });
      const claimed = await claim(app, 'p1');
      const url = `/api/tasks/${created.id}/complete`;

      for (const [what, body] of [
        ['stale token', { processor: 'p1', token: claimed.token + 1, task_output: 'x' }],
        ['another processor', { processor: 'p2', token: claimed.token, task_output: 'x' }],
        ['another processor without a token', { processor: 'p2', task_output: 'x' }],
      ] as const) {
        const refused = await call(app, 'PUT', url, body);
        assert.equal(refused.status, 409, what);
        assert.equal(refused.body.error?.code, 'lease_lost', what);
      }
      assert.equal((await lh.engine.jobGet({ id: created.id }))?.status, 'processing');

      const done = await call(app, 'PUT', url, {
        processor: 'p1',
        token: claimed.token,
        task_output: { answer: 42 },
      });
      assert.equal(done.status, 202);
      const completed = task(done.body);
      assert.equal(completed.status, 'completed');
      assert.deepEqual(completed.task_output, { answer: 42 });
      assert.ok(completed.processed_at);
      assert.equal(completed.must_heartbeat_before, null);

      const twice = await call(app, 'PUT', url, {
        processor: 'p1',
        token: claimed.token,
        task_output: 'again',
      });
      assert.equal(twice.status, 409);
      assert.equal(twice.body.error?.code, 'task_done');
      assert.deepEqual(
        (await lh.engine.jobGet({ id: created.id }))?.result,
        { answer: 42 },
        'the first output stands',
      );

      const unknown = await call(app, 'PUT', '/api/tasks/424242/complete', { processor: 'p1' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error?.code, 'not_found');
    }));

  it('fences a claim that expired and moved on: A is refused 409 lease_lost, B completes with 202', () =>
    withApp('tasks fencing', async (app, lh) => {
      const created = await create(app, { task_data: { step: 1 } });
      const a = await claim(app, 'worker-a', 0.2);
      assert.equal(a.token, 1);

      // Rescue on the database clock once A's claim has expired, with no retry backoff.
      const maintainer = lh.maintainer({ rescueBackoff: { baseMs: 0, capMs: 0 } });
      await waitFor('the expired claim to be rescued', async () => {
        const cycle = await maintainer.runOnce();
        return cycle.rescue === 1;
      });
      const b = await claim(app, 'worker-b', 30);
      assert.equal(b.id, created.id);
      assert.equal(b.token, 2, 'a new claim, a new token');

      for (const [what, path, body] of [
        ['heartbeat with its token', 'heartbeat', { processor: 'worker-a', token: a.token }],
        ['heartbeat without a token', 'heartbeat', { processor: 'worker-a' }],
        [
          "heartbeat under B's name with A's token",
          'heartbeat',
          { processor: 'worker-b', token: a.token },
        ],
        ['complete with its token', 'complete', { processor: 'worker-a', token: a.token }],
        ['complete without a token', 'complete', { processor: 'worker-a', task_output: 'A' }],
        ['fail with its token', 'fail', { processor: 'worker-a', token: a.token, error: 'x' }],
        ['release with its token', 'release', { processor: 'worker-a', token: a.token }],
      ] as const) {
        const refused = await call(app, 'PUT', `/api/tasks/${created.id}/${path}`, body);
        assert.equal(refused.status, 409, `A's ${what}`);
        assert.equal(refused.body.error?.code, 'lease_lost', `A's ${what}`);
      }

      const beat = await call(app, 'PUT', `/api/tasks/${created.id}/heartbeat`, {
        processor: 'worker-b',
        token: b.token,
      });
      assert.equal(beat.status, 202);
      const done = await call(app, 'PUT', `/api/tasks/${created.id}/complete`, {
        processor: 'worker-b',
        token: b.token,
        task_output: 'B',
      });
      assert.equal(done.status, 202);
      const stored = await lh.engine.jobGet({ id: created.id });
      assert.equal(stored?.status, 'completed');
      assert.equal(stored?.claimedBy, 'worker-b');
      assert.equal(stored?.result, 'B', "only B's output is stored");

      const late = await call(app, 'PUT', `/api/tasks/${created.id}/complete`, {
        processor: 'worker-a',
        token: a.token,
      });
      assert.equal(late.status, 409);
      assert.equal(late.body.error?.code, 'task_done');
    }));

  it('fails an attempt with 202: retried after its delay, dead at the last attempt, then task_done', () =>
    withApp('tasks fail', async (app) => {
      const created = await create(app, { task_data: {}, max_attempts: 2 });
      const first = await claim(app, 'p1');
      const retried = await call(app, 'PUT', `/api/tasks/${created.id}/fail`, {
        processor: 'p1',
        token: first.token,
        error: 'boom',
        retry_in_seconds: 0,
      });
      assert.equal(retried.status, 202);
      assert.equal(task(retried.body).status, 'pending');
      assert.equal(task(retried.body).last_error, 'boom');

      const second = await claim(app, 'p2');
      assert.equal(second.token, 2);
      assert.equal(second.attempts, 2);
      const dead = await call(app, 'PUT', `/api/tasks/${created.id}/fail`, {
        processor: 'p2',
        error: 'boom again',
      });
      assert.equal(dead.status, 202);
      assert.equal(task(dead.body).status, 'dead');

      const after = await call(app, 'PUT', `/api/tasks/${created.id}/heartbeat`, {
        processor: 'p2',
        token: second.token,
      });
      assert.equal(after.status, 409);
      assert.equal(after.body.error?.code, 'task_done');
      const missing = await call(app, 'PUT', '/api/tasks/424242/fail', {
        processor: 'p2',
        error: 'x',
      });
      assert.equal(missing.status, 404);
    }));

  for (const route of ['hand-back', 'release'] as const)
    it(`hands a task back with 202 through /${route}: pending at once with the attempt given back, told as task:handed-back (and its deprecated name task:released)`, async () => {
      const events = new TypedEvents<ServiceEventMap>();
      const told: [string, number][] = [];
      for (const name of ['task:handed-back', 'task:released'])
        events.on(name, (payload) => told.push([name, (payload as TaskJson).id]));
      await withApp(
        `tasks ${route}`,
        async (app) => {
          const created = await create(app, { task_data: {} });
          const claimed = await claim(app, 'p1');
          const released = await call(app, 'PUT', `/api/tasks/${created.id}/${route}`, {
            processor: 'p1',
            token: claimed.token,
          });
          assert.equal(released.status, 202);
          assert.equal(task(released.body).status, 'pending');
          assert.equal(task(released.body).attempts, 0);
          assert.deepEqual(told, [
            ['task:handed-back', created.id],
            ['task:released', created.id],
          ]);
          const again = await call(app, 'PUT', `/api/tasks/${created.id}/${route}`, {
            processor: 'p1',
            token: claimed.token,
          });
          assert.equal(again.status, 409);
          assert.equal(again.body.error?.code, 'lease_lost');
          assert.equal(told.length, 2, 'a refused hand-back tells nothing');
          const next = await claim(app, 'p2');
          assert.equal(next.id, created.id);
          assert.equal(next.token, 2);
        },
        { events },
      );
    });

  it("cancels and retries tasks, refuses what does not apply with 409, and never touches another queue's job", () =>
    withApp('tasks cancel retry', async (app, lh) => {
      const pending = await create(app, { task_data: { n: 1 } });
      const cancelled = await call(app, 'POST', `/api/tasks/${pending.id}/cancel`);
      assert.equal(cancelled.status, 200);
      assert.equal(task(cancelled.body).status, 'cancelled');
      const cancelledAgain = await call(app, 'POST', `/api/tasks/${pending.id}/cancel`);
      assert.equal(cancelledAgain.status, 200, 'cancelling a cancelled task changes nothing');
      const retried = await call(app, 'POST', `/api/tasks/${pending.id}/retry`);
      assert.equal(retried.status, 200);
      assert.equal(task(retried.body).status, 'pending');
      const retryLive = await call(app, 'POST', `/api/tasks/${pending.id}/retry`);
      assert.equal(retryLive.status, 409);
      assert.equal(retryLive.body.error?.code, 'conflict', 'a live task cannot be retried');

      const running = await claim(app, 'p1');
      const stopped = await call(app, 'POST', `/api/tasks/${running.id}/cancel`);
      assert.equal(stopped.status, 200);
      const beat = await call(app, 'PUT', `/api/tasks/${running.id}/heartbeat`, {
        processor: 'p1',
        token: running.token,
      });
      assert.equal(beat.status, 409, 'the worker learns of the cancel at its next heartbeat');
      assert.equal(beat.body.error?.code, 'task_done');

      const finished = await create(app, { task_data: { n: 2 } });
      const claimed = await claim(app, 'p1');
      assert.equal(claimed.id, finished.id);
      await call(app, 'PUT', `/api/tasks/${finished.id}/complete`, {
        processor: 'p1',
        token: claimed.token,
      });
      const cancelDone = await call(app, 'POST', `/api/tasks/${finished.id}/cancel`);
      assert.equal(cancelDone.status, 409);
      assert.equal(cancelDone.body.error?.code, 'task_done');
      assert.equal((await lh.engine.jobGet({ id: finished.id }))?.status, 'completed');

      const other = await lh.queue('emails').enqueue({ to: 'ada' });
      for (const action of ['cancel', 'retry']) {
        const answer = await call(app, 'POST', `/api/tasks/${other.id}/${action}`);
        assert.equal(answer.status, 404, `${action} of another queue's job`);
      }
      assert.equal((await lh.engine.jobGet({ id: other.id }))?.status, 'pending');
      assert.equal((await call(app, 'POST', '/api/tasks/424242/cancel')).status, 404);
    }));

  it("refuses heartbeat, complete, fail and release of another queue's job with 404, even with its worker and token", () =>
    withApp('tasks other queue', async (app, lh) => {
      await lh.queue('emails').enqueue({ to: 'ada' });
      const [job] = await lh.engine.jobClaimBatch({
        queues: ['emails'],
        workerId: 'w1',
        limit: 1,
        leaseTtlMs: 30_000,
      });
      const before = await allJobs(lh);
      for (const [path, body] of [
        ['heartbeat', { processor: 'w1', token: job!.generation }],
        ['complete', { processor: 'w1', token: job!.generation, task_output: 'x' }],
        ['fail', { processor: 'w1', token: job!.generation, error: 'x' }],
        ['release', { processor: 'w1', token: job!.generation }],
      ] as const) {
        const answer = await call(app, 'PUT', `/api/tasks/${job!.id}/${path}`, body);
        assert.equal(answer.status, 404, path);
        assert.equal(answer.body.error?.code, 'not_found', path);
      }
      assert.deepEqual(await allJobs(lh), before, 'the job is untouched');
    }));

  it('rejects bad input with 4xx, a stable code and no state change', () =>
    withApp('tasks bad input', async (app, lh) => {
      const created = await create(app, { task_data: { n: 1 } });
      const claimed = await claim(app, 'p1');
      const before = await allJobs(lh);
      const raw = { 'content-type': 'application/json' };
      const cases: [string, string, string, unknown, number, string][] = [
        ['create: malformed JSON', 'POST', '/api/tasks', '{"task_data": ', 400, 'invalid_argument'],
        ['create: empty body', 'POST', '/api/tasks', '', 400, 'invalid_argument'],
        ['create: missing task_data', 'POST', '/api/tasks', {}, 400, 'invalid_argument'],
        [
          'create: task_data a string',
          'POST',
          '/api/tasks',
          { task_data: 'x' },
          400,
          'invalid_argument',
        ],
        [
          'create: task_data an array',
          'POST',
          '/api/tasks',
          { task_data: [1] },
          400,
          'invalid_argument',
        ],
        [
          'create: task_data null',
          'POST',
          '/api/tasks',
          { task_data: null },
          400,
          'invalid_argument',
        ],
        [
          'create: unknown field',
          'POST',
          '/api/tasks',
          { task_data: {}, processor: 'me' },
          400,
          'invalid_argument',
        ],
        [
          'create: scheduled_at not a date',
          'POST',
          '/api/tasks',
          { task_data: {}, scheduled_at: 'tomorrow' },
          400,
          'invalid_argument',
        ],
        [
          'create: over-long key',
          'POST',
          '/api/tasks',
          { task_data: {}, key: 'k'.repeat(257) },
          400,
          'invalid_argument',
        ],
        [
          'create: max_attempts zero',
          'POST',
          '/api/tasks',
          { task_data: {}, max_attempts: 0 },
          400,
          'invalid_argument',
        ],
        [
          'create: priority as a string',
          'POST',
          '/api/tasks',
          { task_data: {}, priority: '1' },
          400,
          'invalid_argument',
        ],
        ['create: array body', 'POST', '/api/tasks', [{ task_data: {} }], 400, 'invalid_argument'],
        [
          'create: huge body',
          'POST',
          '/api/tasks',
          JSON.stringify({ task_data: { x: 'y'.repeat(100_000) } }),
          413,
          'payload_too_large',
        ],
        [
          'create: prototype poisoning',
          'POST',
          '/api/tasks',
          '{"task_data": {"__proto__": {"admin": true}}}',
          400,
          'invalid_argument',
        ],
        ['next: no body', 'POST', '/api/tasks/next', undefined, 400, 'invalid_argument'],
        ['next: missing processor', 'POST', '/api/tasks/next', {}, 400, 'invalid_argument'],
        [
          'next: processor a number',
          'POST',
          '/api/tasks/next',
          { processor: 7 },
          400,
          'invalid_argument',
        ],
        [
          'next: over-long processor',
          'POST',
          '/api/tasks/next',
          { processor: 'p'.repeat(257) },
          400,
          'invalid_argument',
        ],
        [
          'next: control characters',
          'POST',
          '/api/tasks/next',
          { processor: 'p\u0007' },
          400,
          'invalid_argument',
        ],
        [
          'next: lease_seconds zero',
          'POST',
          '/api/tasks/next',
          { processor: 'p2', lease_seconds: 0 },
          400,
          'invalid_argument',
        ],
        [
          'next: unknown field',
          'POST',
          '/api/tasks/next',
          { processor: 'p2', limit: 5 },
          400,
          'invalid_argument',
        ],
        [
          'heartbeat: token zero',
          'PUT',
          `/api/tasks/${created.id}/heartbeat`,
          { processor: 'p1', token: 0 },
          400,
          'invalid_argument',
        ],
        [
          'heartbeat: token as a string',
          'PUT',
          `/api/tasks/${created.id}/heartbeat`,
          { processor: 'p1', token: String(claimed.token) },
          400,
          'invalid_argument',
        ],
        [
          'heartbeat: fractional token',
          'PUT',
          `/api/tasks/${created.id}/heartbeat`,
          { processor: 'p1', token: 1.5 },
          400,
          'invalid_argument',
        ],
        [
          'heartbeat: malformed id',
          'PUT',
          '/api/tasks/1.5/heartbeat',
          { processor: 'p1' },
          400,
          'invalid_argument',
        ],
        [
          'complete: missing processor',
          'PUT',
          `/api/tasks/${created.id}/complete`,
          { token: claimed.token },
          400,
          'invalid_argument',
        ],
        [
          'complete: unknown field',
          'PUT',
          `/api/tasks/${created.id}/complete`,
          { processor: 'p1', token: claimed.token, status: 'completed' },
          400,
          'invalid_argument',
        ],
        [
          'complete: malformed JSON',
          'PUT',
          `/api/tasks/${created.id}/complete`,
          '{"processor": "p1", ',
          400,
          'invalid_argument',
        ],
        [
          'complete: huge output',
          'PUT',
          `/api/tasks/${created.id}/complete`,
          JSON.stringify({
            processor: 'p1',
            token: claimed.token,
            task_output: 'z'.repeat(70_000),
          }),
          413,
          'payload_too_large',
        ],
        [
          'fail: missing error',
          'PUT',
          `/api/tasks/${created.id}/fail`,
          { processor: 'p1', token: claimed.token },
          400,
          'invalid_argument',
        ],
        [
          'fail: over-long error',
          'PUT',
          `/api/tasks/${created.id}/fail`,
          { processor: 'p1', token: claimed.token, error: 'e'.repeat(4097) },
          400,
          'invalid_argument',
        ],
        [
          'fail: negative retry',
          'PUT',
          `/api/tasks/${created.id}/fail`,
          { processor: 'p1', token: claimed.token, error: 'x', retry_in_seconds: -1 },
          400,
          'invalid_argument',
        ],
      ];
      for (const [what, method, url, payload, status, code] of cases) {
        const answer = await call(
          app,
          method,
          url,
          payload,
          typeof payload === 'string' ? raw : {},
        );
        assert.equal(answer.status, status, `${what}: status (${answer.text})`);
        assert.equal(answer.body.error?.code, code, `${what}: code`);
        assert.ok(answer.body.error?.message, `${what}: message`);
      }
      const text = await call(app, 'POST', '/api/tasks', 'task_data=1', {
        'content-type': 'text/plain',
      });
      assert.equal(text.status, 415);
      assert.equal(text.body.error?.code, 'unsupported_media_type');
      const missingField = await call(app, 'POST', '/api/tasks/next', { processor: '' });
      assert.match(missingField.body.error?.message ?? '', /body\.processor/, 'names the field');
      // What jsonb cannot store is refused by the library's enqueue validator (decision 0231),
      // naming the field as this API spells it, with the message the route gave before.
      for (const [escaped, what] of [
        ['\\u0000', 'NUL characters'],
        ['\\udc00', 'lone surrogates'],
      ] as const) {
        const refused = await call(
          app,
          'POST',
          '/api/tasks',
          `{"task_data":{"a":"x${escaped}"}}`,
          raw,
        );
        assert.equal(refused.status, 400, refused.text);
        assert.equal(refused.body.error?.code, 'invalid_argument');
        assert.equal(
          refused.body.error?.message,
          `task_data: must not contain ${what} in keys or strings`,
        );
      }

      assert.deepEqual(await allJobs(lh), before, 'nothing was written');
    }));
});
