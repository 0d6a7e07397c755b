// The operations routes through inject(): generator status and control (the same answer from
// every instance), workers, health, Prometheus metrics, the OpenAPI document, and how API keys
// are presented and parsed (route-scopes.test.ts checks every route's scope). On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isLeaseholdError } from '../../src/core/errors.js';
import type { InstrumentedEngine } from '../../src/engine/instrumented-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { TaskGenerator } from '../../src/processes/generator.js';
import { buildApp } from '../../src/service/app.js';
import { parseApiKeys, type ApiKeyConfig } from '../../src/service/auth.js';
import { closeTestDatabase } from '../support/database.js';
import { PROMTOOL_SKIP, promtoolCheck } from '../support/promtool.js';
import { bearer, call, withApp, type Answer } from '../support/service.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const KEYS = {
  reader: 'reader-key-0123456789',
  writer: 'writer-key-0123456789',
  admin: 'admin-key-0123456789abc',
} as const;
const API_KEYS: ApiKeyConfig[] = [
  { name: 'reader', key: KEYS.reader, scope: 'read' },
  { name: 'writer', key: KEYS.writer, scope: 'write' },
  { name: 'admin', key: KEYS.admin, scope: 'admin' },
];
const reader = bearer(KEYS.reader);
const writer = bearer(KEYS.writer);
const admin = bearer(KEYS.admin);

interface GeneratorJson {
  state: string;
  runningOn: string | null;
  token: number | null;
  leaseExpiresAt: string | null;
  changedBy: string | null;
  changedAt: string | null;
}

describe('generator routes', () => {
  it('start and stop need the admin scope, and every instance answers the same status', () =>
    withApp(
      'ops generator',
      async (appA, lh, schema) => {
        const lhB = Leasehold.fromEngine(await schema.engine());
        const appB = await buildApp({ lh: lhB, apiKeys: API_KEYS, instanceId: 'instance-b' });
        const status = async (app = appA): Promise<GeneratorJson> => {
          const answer = await call(app, 'GET', '/api/generator', undefined, reader);
          assert.equal(answer.status, 200, answer.text);
          return answer.body as unknown as GeneratorJson;
        };
        try {
          assert.deepEqual(await status(), {
            state: 'stopped',
            runningOn: null,
            token: null,
            leaseExpiresAt: null,
            changedBy: null,
            changedAt: null,
          });
          assert.equal((await call(appA, 'GET', '/api/generator')).status, 401);
          const byWriter = await call(appA, 'POST', '/api/generator/start', undefined, writer);
          assert.equal(byWriter.status, 403);
          assert.equal(byWriter.body.error?.code, 'forbidden');
          assert.equal((await status()).state, 'stopped', 'a refused start changes nothing');

          const started = await call(appA, 'POST', '/api/generator/start', undefined, admin);
          assert.equal(started.status, 200);
          assert.equal(started.body.state, 'started');
          assert.equal(started.body.changedBy, 'admin@instance-a');
          assert.deepEqual(await status(appB), await status(appA), 'the same from instance B');

          // An instance's generator loop takes the lease; the status says where it runs.
          const generator = new TaskGenerator({ lh, instanceId: 'gen-1', leaseTtlMs: 5_000 });
          assert.equal((await generator.runOnce()).leading, true);
          const running = await status(appB);
          assert.equal(running.runningOn, 'gen-1');
          assert.ok(running.token && running.token >= 1);
          assert.ok(running.leaseExpiresAt);
          assert.deepEqual(await status(appA), running);

          const stopped = await call(appB, 'POST', '/api/generator/stop', undefined, admin);
          assert.equal(stopped.status, 200);
          assert.equal(stopped.body.state, 'stopped');
          assert.equal(stopped.body.changedBy, 'admin@instance-b');
          assert.equal((await generator.runOnce()).leading, false, 'the loop stands down');
          assert.equal((await status(appA)).runningOn, null, 'and releases its lease at once');
          await generator.stop();
        } finally {
          await appB.close();
        }
      },
      { apiKeys: API_KEYS, instanceId: 'instance-a' },
    ));
});

describe('workers route', () => {
  it('lists registered queue workers by status, and rejects a bad filter with 400', () =>
    withApp('ops workers', async (app, lh) => {
      const worker = lh.worker({
        queues: 'tasks',
        handler: async () => null,
        id: 'worker-ops',
        name: 'ops worker',
        concurrency: 3,
      });
      await worker.start();
      try {
        const answer = await call(app, 'GET', '/api/workers');
        assert.equal(answer.status, 200);
        const [listed] = answer.body.workers as Record<string, unknown>[];
        assert.equal(listed?.id, 'worker-ops');
        assert.equal(listed?.name, 'ops worker');
        assert.equal(listed?.status, 'alive');
        assert.deepEqual(listed?.queues, ['tasks']);
        assert.equal(listed?.concurrency, 3);
        assert.equal(listed?.pid, process.pid);
        assert.equal(listed?.inFlight, 0);
        assert.ok(!Number.isNaN(Date.parse(listed?.lastSeenAt as string)));
      } finally {
        await worker.drain({ timeout: 1_000 });
      }
      const ids = async (query: string): Promise<unknown[]> =>
        ((await call(app, 'GET', `/api/workers${query}`)).body.workers as { id: string }[]).map(
          (w) => w.id,
        );
      assert.deepEqual(await ids('?status=stopped'), ['worker-ops']);
      assert.deepEqual(await ids('?status=alive'), []);
      for (const query of ['status=sleeping', 'limit=0', 'limit=1001', 'limit=many', 'host=x']) {
        const bad = await call(app, 'GET', `/api/workers?${query}`);
        assert.equal(bad.status, 400, query);
        assert.equal(bad.body.error?.code, 'invalid_argument', query);
      }
    }));
});

describe('health, metrics and docs', () => {
  it('answers /healthz with the instance and the database time, without a key', () =>
    withApp(
      'ops health',
      async (app) => {
        const health = await call(app, 'GET', '/healthz');
        assert.equal(health.status, 200);
        assert.equal(health.body.status, 'ok');
        assert.equal(health.body.instance, 'instance-a');
        assert.ok(!Number.isNaN(Date.parse(health.body.databaseTime as string)));
      },
      { apiKeys: API_KEYS, instanceId: 'instance-a' },
    ));

  it('serves Prometheus metrics with the documented names, to the read scope', () =>
    withApp(
      'ops metrics',
      async (app) => {
        await call(app, 'POST', '/api/leases', { resource: 'r', holder: 'a' }, writer);
        await call(app, 'POST', '/api/leases', { resource: 'r', holder: 'b' }, writer);
        await call(app, 'POST', '/api/tasks', { task_data: { n: 1 } }, writer);
        await call(app, 'POST', '/api/tasks', { task_data: { n: 2 } }, writer);
        const claimed = await call(app, 'POST', '/api/tasks/next', { processor: 'p' }, writer);
        const done = await call(
          app,
          'PUT',
          `/api/tasks/${claimed.body.id}/complete`,
          { processor: 'p', token: claimed.body.token },
          writer,
        );
        assert.equal(done.status, 202);

        assert.equal((await call(app, 'GET', '/metrics')).status, 401);
        const metrics = await call(app, 'GET', '/metrics', undefined, reader);
        assert.equal(metrics.status, 200);
        assert.match(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/);
        for (const line of [
          /^leasehold_lease_acquisitions_total\{result="acquired"\} 1$/m,
          /^leasehold_lease_acquisitions_total\{result="held"\} 1$/m,
          /^leasehold_leases_active 1$/m,
          /^leasehold_jobs\{queue="tasks",status="pending"\} 1$/m,
          /^leasehold_jobs\{queue="tasks",status="completed"\} 1$/m,
          /^leasehold_claim_latency_seconds_count\{queue="tasks"\} 1$/m,
          /^leasehold_job_duration_seconds_count\{queue="tasks",outcome="completed"\} 1$/m,
          /^leasehold_http_requests_total\{method="POST",route="\/api\/tasks",status="201"\} 2$/m,
          /^leasehold_http_request_duration_seconds_count\{method="PUT",route="\/api\/tasks\/:id\/complete"\} 1$/m,
          /^leasehold_process_cpu_user_seconds_total \d/m,
          /^leasehold_nodejs_eventloop_lag_seconds \d/m,
        ])
          assert.match(metrics.text, line);
        assert.doesNotMatch(metrics.text, /^(?!leasehold_|#|$)/m, 'every metric is leasehold_*');
      },
      { apiKeys: API_KEYS },
    ));

  it(
    'serves metrics that pass promtool check metrics (library, HTTP and process metrics)',
    { skip: PROMTOOL_SKIP },
    () =>
      withApp(
        'ops metrics promtool',
        async (app) => {
          await call(app, 'POST', '/api/leases', { resource: 'r', holder: 'a' }, writer);
          await call(app, 'POST', '/api/tasks', { task_data: { n: 1 } }, writer);
          const metrics = await call(app, 'GET', '/metrics', undefined, reader);
          assert.equal(metrics.status, 200);
          const lint = promtoolCheck(metrics.text);
          assert.equal(lint.status, 0, `promtool check metrics: ${lint.said}`);
          assert.equal(lint.said, '', 'promtool has nothing to say');
        },
        { apiKeys: API_KEYS },
      ),
  );

  it("counts an acquire that extends the caller's own live term as extended, and every active lease beyond a thousand", () =>
    withApp(
      'ops metrics counts',
      async (app, lh) => {
        const acquire = (holder: string): Promise<Answer> =>
          call(app, 'POST', '/api/leases', { resource: 'r', holder, ttlSeconds: 600 }, writer);
        assert.equal((await acquire('a')).status, 201, 'a new term');
        assert.equal((await acquire('a')).status, 200, 'the same holder: its term extended');
        assert.equal((await acquire('a')).status, 200, 'and again');
        assert.equal((await acquire('b')).status, 409, 'another holder: held');
        // 1,200 more live leases in one statement, and 10 that are released or expired, which
        // the gauge must not count.
        const live = Array.from({ length: 1200 }, (_, i) => ({
          resource: `bulk-${i}`,
          holder: 'bulk',
          ttlMs: 600_000,
          metadata: {},
        }));
        const results = await lh.engine.leaseAcquireMany(live);
        assert.ok(results.every((r) => r.acquired));
        for (let i = 0; i < 5; i++) {
          await lh.engine.leaseAcquire({ resource: `gone-${i}`, holder: 'x', ttlMs: 600_000 });
          assert.ok(await lh.engine.leaseRelease({ resource: `gone-${i}`, holder: 'x' }));
          await lh.engine.leaseAcquire({ resource: `short-${i}`, holder: 'x', ttlMs: 1 });
        }
        const metrics = await waitFor(
          'the gauge to count the 1,201 live leases once the 1 ms ones have expired',
          async () => {
            const answer = await call(app, 'GET', '/metrics', undefined, reader);
            return /^leasehold_leases_active 1201$/m.test(answer.text) ? answer : undefined;
          },
        );
        // Every acquire of this process is counted (the library's metrics, decision 0258): the
        // route's one new term, the 1,200 in one statement and the 10 made one by one.
        for (const line of [
          /^leasehold_lease_acquisitions_total\{result="acquired"\} 1211$/m,
          /^leasehold_lease_acquisitions_total\{result="extended"\} 2$/m,
          /^leasehold_lease_acquisitions_total\{result="held"\} 1$/m,
        ])
          assert.match(metrics.text, line);
      },
      { apiKeys: API_KEYS },
    ));

  it('reports every engine call of a lease request in leasehold_engine_call_duration_seconds, from the engine events, and stops listening when the app closes', async () => {
    let engine: InstrumentedEngine | undefined;
    await withApp(
      'ops metrics engine calls',
      async (app, lh) => {
        engine = lh.engine as InstrumentedEngine;
        assert.equal(engine.listenerCount, 1, "the app's metrics listen to the engine");
        const acquired = await call(
          app,
          'POST',
          '/api/leases',
          { resource: 'engine-metrics', holder: 'a', ttlSeconds: 600 },
          writer,
        );
        assert.equal(acquired.status, 201);
        // A failing call is counted as an error: a fence check with an older token is refused.
        await lh.engine.fenceCheck({ scope: 'engine-metrics', token: 5 });
        await assert.rejects(lh.engine.fenceCheck({ scope: 'engine-metrics', token: 3 }));
        const metrics = await call(app, 'GET', '/metrics', undefined, reader);
        assert.equal(metrics.status, 200);
        assert.match(
          metrics.text,
          /^# TYPE leasehold_engine_call_duration_seconds histogram$/m,
          'the engine call histogram is exported',
        );
        const acquires =
          /^leasehold_engine_call_duration_seconds_count\{operation="(leaseAcquire|leaseAcquireMany)",outcome="ok"\} (\d+)$/m.exec(
            metrics.text,
          );
        assert.ok(acquires, "the lease route's acquire is counted by operation, outcome ok");
        assert.ok(Number(acquires[2]) >= 1);
        assert.match(
          metrics.text,
          /^leasehold_engine_call_duration_seconds_count\{operation="fenceCheck",outcome="error"\} 1$/m,
        );
        assert.match(
          metrics.text,
          /^leasehold_engine_call_duration_seconds_bucket\{le="\+Inf",operation="(leaseAcquire|leaseAcquireMany)",outcome="ok"\} \d+$/m,
        );
      },
      { apiKeys: API_KEYS },
    );
    assert.equal(engine?.listenerCount, 0, 'the closed app no longer listens to the engine');
  });

  it('serves the API docs and an OpenAPI document listing every route with its answers', () =>
    withApp(
      'ops docs',
      async (app) => {
        const page = await call(app, 'GET', '/docs');
        assert.equal(page.status, 200, 'public, no key');
        assert.match(String(page.headers['content-type']), /text\/html/);
        const doc = await call(app, 'GET', '/docs/json');
        assert.equal(doc.status, 200);
        assert.match(String(doc.body.openapi), /^3\./);
        assert.deepEqual(doc.body.security, [{ apiKey: [] }]);
        type Operation = {
          responses: Record<string, unknown>;
          requestBody?: { content: Record<string, { schema: { required?: string[] } }> };
        };
        const paths = doc.body.paths as Record<string, Record<string, Operation>>;
        const expected: [string, string, string[]][] = [
          ['get', '/api/leases', ['200']],
          ['post', '/api/leases', ['200', '201', '400', '409']],
          ['get', '/api/leases/active', ['200']],
          ['get', '/api/leases/expired', ['200']],
          ['get', '/api/leases/renewed', ['200']],
          ['get', '/api/leases/released', ['200']],
          ['put', '/api/leases/renew', ['200', '409']],
          ['delete', '/api/leases/release', ['200', '409']],
          ['get', '/api/leases/{id}', ['200', '404']],
          ['delete', '/api/leases/{id}', ['200', '404', '409']],
          ['get', '/api/tasks', ['200']],
          ['post', '/api/tasks', ['200', '201', '400']],
          ['get', '/api/tasks/processed', ['200']],
          ['get', '/api/tasks/started', ['200']],
          ['get', '/api/tasks/{id}', ['200', '404']],
          ['post', '/api/tasks/next', ['200', '204']],
          ['put', '/api/tasks/{id}/heartbeat', ['202', '404', '409']],
          ['put', '/api/tasks/{id}/complete', ['202', '404', '409']],
          ['put', '/api/tasks/{id}/fail', ['202', '404', '409']],
          ['put', '/api/tasks/{id}/hand-back', ['202', '404', '409']],
          ['put', '/api/tasks/{id}/release', ['202', '404', '409']],
          ['post', '/api/tasks/{id}/cancel', ['200', '404', '409']],
          ['post', '/api/tasks/{id}/retry', ['200', '404', '409']],
          ['get', '/api/jobs', ['200']],
          ['get', '/api/jobs/{id}', ['200', '404']],
          ['delete', '/api/jobs/{id}', ['200', '404', '409']],
          ['post', '/api/jobs/{id}/retry', ['200', '404', '409']],
          ['post', '/api/jobs/{id}/cancel', ['200', '404', '409']],
          ['get', '/api/jobs/{id}/explain', ['200', '400', '404']],
          ['get', '/api/jobs/{id}/wait', ['200', '400', '404']],
          ['get', '/api/queues', ['200']],
          ['post', '/api/queues/{name}/pause', ['200', '400', '403']],
          ['post', '/api/queues/{name}/resume', ['200', '400', '403']],
          ['put', '/api/queues/{name}/settings', ['200', '400', '403']],
          ['post', '/api/queues/{name}/jobs/retry', ['200', '400', '403']],
          ['post', '/api/queues/{name}/jobs/cancel', ['200', '400', '403']],
          ['delete', '/api/queues/{name}/jobs', ['200', '400', '403']],
          ['get', '/api/generator', ['200']],
          ['post', '/api/generator/start', ['200', '403']],
          ['post', '/api/generator/stop', ['200', '403']],
          ['get', '/api/workers', ['200']],
          ['get', '/api/events', []],
          ['get', '/metrics', []],
          ['get', '/healthz', ['200', '503']],
        ];
        for (const [method, path, codes] of expected) {
          const operation = paths[path]?.[method];
          assert.ok(operation, `OpenAPI documents ${method.toUpperCase()} ${path}`);
          for (const code of codes)
            assert.ok(
              operation.responses[code],
              `${method.toUpperCase()} ${path} documents ${code}`,
            );
        }
        const create = paths['/api/tasks']!.post!.requestBody!.content['application/json']!;
        assert.deepEqual(create.schema.required, ['task_data'], 'body schemas are documented');
        assert.equal(paths['/'], undefined, 'the dashboard page is not an API route');
      },
      { apiKeys: API_KEYS },
    ));
});

describe('auth', () => {
  it('accepts a key as a bearer token or x-api-key, and refuses wrong, empty or other schemes before reading the body', () =>
    withApp(
      'ops keys',
      async (app, lh) => {
        const accepted = [reader, { 'x-api-key': KEYS.reader }, bearer(` ${KEYS.reader} `)];
        for (const headers of accepted)
          assert.equal((await call(app, 'GET', '/api/tasks', undefined, headers)).status, 200);
        const refused = [
          bearer('reader-key-012345678'),
          bearer(`${KEYS.reader}x`),
          bearer(''),
          { authorization: `Basic ${Buffer.from(`u:${KEYS.reader}`).toString('base64')}` },
          { authorization: KEYS.reader },
          { 'x-api-key': '' },
        ];
        for (const headers of refused) {
          const answer = await call(app, 'GET', '/api/tasks', undefined, headers);
          assert.equal(answer.status, 401, JSON.stringify(headers));
          assert.equal(answer.body.error?.code, 'unauthorized');
          assert.doesNotMatch(answer.text, /reader-key/, 'the key is never echoed');
        }
        const unauthenticated = await call(app, 'POST', '/api/tasks', '{"task_data": ', {
          'content-type': 'application/json',
        });
        assert.equal(unauthenticated.status, 401, 'no key: 401 before the body is looked at');
        const forbidden = await call(app, 'POST', '/api/tasks', { task_data: {} }, reader);
        assert.equal(forbidden.status, 403);
        assert.deepEqual(
          await lh.engine.jobList({ limit: 10, offset: 0 }),
          [],
          'a refused request writes nothing',
        );
      },
      { apiKeys: API_KEYS },
    ));

  it('refuses keys shorter than 16 characters or with an unknown scope, and parses LEASEHOLD_API_KEYS', async () => {
    const lh = Leasehold.memory();
    try {
      for (const apiKeys of [
        [{ name: 'short', key: 'too-short', scope: 'read' }],
        [{ name: 'odd', key: 'long-enough-key-0123', scope: 'root' }],
      ] as ApiKeyConfig[][]) {
        await assert.rejects(buildApp({ lh, apiKeys }), (error: unknown) =>
          isLeaseholdError(error, 'invalid_argument'),
        );
      }
    } finally {
      await lh.close();
    }
    assert.deepEqual(parseApiKeys('admin:abc,ci:write:de:f'), [
      { name: 'key1', scope: 'admin', key: 'abc' },
      { name: 'ci', scope: 'write', key: 'de:f' },
    ]);
    assert.deepEqual(parseApiKeys(''), []);
    assert.throws(
      () => parseApiKeys('owner:abc'),
      (error: unknown) => isLeaseholdError(error, 'invalid_argument'),
    );
  });
});
