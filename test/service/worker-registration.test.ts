// HTTP task workers in the workers list (issue 30, decision 0264): the registration and
// heartbeat routes (scopes, bad input, an unknown worker), and the HTTP task worker itself
// against a listening service: registered as kind `http`, its task in hand counted, and
// `stopped` after a clean stop. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { TaskClient } from '../../src/client/task-client.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import { HttpTaskWorker } from '../../src/processes/task-worker.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { bearer, call, withApp } from '../support/service.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const REGISTRATION = {
  name: 'py-worker-1',
  host: 'box-7',
  pid: 321,
  queues: ['tasks', 'emails'],
  concurrency: 2,
};

describe('worker registration routes', () => {
  it('registers an HTTP worker, refreshes it with heartbeats, and lists it beside the library workers', () =>
    withApp('workers register', async (app, lh) => {
      const library = lh.worker({ queues: 'tasks', handler: async () => null, id: 'lib-1' });
      await library.start();
      try {
        const put = await call(app, 'PUT', '/api/workers/py-1', REGISTRATION);
        assert.equal(put.status, 200, JSON.stringify(put.body));
        const worker = put.body.worker as Record<string, unknown>;
        assert.equal(worker.kind, 'http');
        assert.equal(worker.status, 'alive');
        assert.deepEqual(worker.queues, ['tasks', 'emails']);
        assert.equal(worker.inFlight, 0);

        const beat = await call(app, 'POST', '/api/workers/py-1/heartbeat', { inFlight: 2 });
        assert.equal(beat.status, 200);
        assert.equal((beat.body.worker as { inFlight: number }).inFlight, 2);
        const draining = await call(app, 'POST', '/api/workers/py-1/heartbeat', {
          inFlight: 1,
          status: 'draining',
        });
        assert.equal((draining.body.worker as { status: string }).status, 'draining');

        const listed = (await call(app, 'GET', '/api/workers')).body.workers as {
          id: string;
          kind: string;
        }[];
        assert.deepEqual(
          listed.map((w) => [w.id, w.kind]),
          [
            ['lib-1', 'library'],
            ['py-1', 'http'],
          ],
        );
        const unknown = await call(app, 'POST', '/api/workers/nobody/heartbeat', { inFlight: 0 });
        assert.equal(unknown.status, 404);
        assert.equal(unknown.body.error?.code, 'not_found');
      } finally {
        await library.drain({ timeout: 1_000 });
      }
    }));

  it('refuses bad registrations and heartbeats with invalid_argument, and changes nothing', () =>
    withApp('workers bad input', async (app, lh) => {
      const bad: [string, string, unknown][] = [
        ['PUT', '/api/workers/w', { ...REGISTRATION, pid: -1 }],
        ['PUT', '/api/workers/w', { ...REGISTRATION, queues: [] }],
        ['PUT', '/api/workers/w', { ...REGISTRATION, concurrency: 0 }],
        ['PUT', '/api/workers/w', { ...REGISTRATION, concurrency: 1.5 }],
        ['PUT', '/api/workers/w', { ...REGISTRATION, kind: 'library' }],
        ['PUT', '/api/workers/w', { ...REGISTRATION, name: '' }],
        ['PUT', '/api/workers/w', { name: 'x' }],
        ['PUT', '/api/workers/w', ['not', 'an object']],
        ['POST', '/api/workers/w/heartbeat', { inFlight: -1 }],
        ['POST', '/api/workers/w/heartbeat', { inFlight: 0, status: 'dead' }],
        ['POST', '/api/workers/w/heartbeat', { inFlight: 0, extra: true }],
      ];
      for (const [method, path, body] of bad) {
        const answer = await call(app, method, path, body);
        assert.equal(answer.status, 400, `${method} ${path} ${JSON.stringify(body)}`);
        assert.equal(answer.body.error?.code, 'invalid_argument');
      }
      assert.deepEqual(await lh.jobs.workers(), [], 'nothing was registered');
    }));

  it('needs a write key to register or beat, a read key to list', () =>
    withApp(
      'workers scopes',
      async (app) => {
        const reader = bearer('reader-key-0123456789');
        const writer = bearer('writer-key-0123456789');
        const refused = await call(app, 'PUT', '/api/workers/w', REGISTRATION, reader);
        assert.equal(refused.status, 403);
        assert.equal((await call(app, 'PUT', '/api/workers/w', REGISTRATION)).status, 401);
        assert.equal((await call(app, 'PUT', '/api/workers/w', REGISTRATION, writer)).status, 200);
        const beat = await call(app, 'POST', '/api/workers/w/heartbeat', { inFlight: 0 }, reader);
        assert.equal(beat.status, 403);
        assert.equal((await call(app, 'GET', '/api/workers', undefined, reader)).status, 200);
      },
      {
        apiKeys: [
          { name: 'reader', key: 'reader-key-0123456789', scope: 'read' },
          { name: 'writer', key: 'writer-key-0123456789', scope: 'write' },
        ],
      },
    ));
});

describe('toolkit worker registration', () => {
  it('lh.jobs.registerWorker and workerHeartbeat validate with a typed error naming the field', () =>
    withSchema('workers toolkit', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const cases: [string, () => Promise<unknown>][] = [
        ['pid', () => lh.jobs.registerWorker({ ...REGISTRATION, id: 'w', pid: -3 })],
        ['queues', () => lh.jobs.registerWorker({ ...REGISTRATION, id: 'w', queues: [] })],
        [
          'kind',
          () => lh.jobs.registerWorker({ ...REGISTRATION, id: 'w', kind: 'robot' as 'http' }),
        ],
        ['inFlight', () => lh.jobs.workerHeartbeat('w', { inFlight: -1 })],
        ['status', () => lh.jobs.workerHeartbeat('w', { inFlight: 0, status: 'dead' })],
      ];
      for (const [field, attempt] of cases)
        await assert.rejects(attempt, (e: unknown) => {
          assert.ok(e instanceof InvalidArgumentError, String(e));
          assert.equal(e.details.field, field);
          return true;
        });
      assert.deepEqual(await lh.jobs.workers(), []);
    }));
});

describe('HTTP task worker presence', () => {
  it('registers as kind http, counts the task in hand, and ends stopped', () =>
    withSchema('workers http presence', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({ lh, port: 0 });
      let release: () => void = () => {};
      const working = new Promise<void>((resolve) => (release = resolve));
      let started = false;
      const worker = new HttpTaskWorker({
        client: new TaskClient({ baseUrl: server.url }),
        workerId: 'http-worker-1',
        pollIntervalMs: 50,
        presence: { intervalMs: 100, registration: { queues: ['tasks'] } },
        work: async () => {
          started = true;
          await working;
          return { ok: true };
        },
      });
      try {
        worker.start();
        const row = async () => (await lh.jobs.workers()).find((w) => w.id === 'http-worker-1');
        const registered = await waitFor('the worker registered', row);
        assert.equal(registered.kind, 'http');
        assert.deepEqual(registered.queues, ['tasks']);
        assert.equal(registered.pid, process.pid);

        await lh.queue('tasks').enqueue({ n: 1 });
        await waitFor('the task in hand', () => started);
        await waitFor('one in flight on the row', async () => (await row())?.inFlight === 1);
        release();
        await waitFor('nothing in flight', async () => (await row())?.inFlight === 0);
      } finally {
        release();
        await worker.stop();
        const after = (await lh.jobs.workers()).find((w) => w.id === 'http-worker-1');
        assert.equal(after?.status, 'stopped');
        await server.close();
      }
    }));
});
