// The service as a Fastify plugin in a user's own app (issue 29, part 4; decision 0262): mounted
// under /leasehold beside the user's routes, it guards and shapes its own routes only; its API,
// OpenAPI document, Swagger UI and dashboard (the page and the assets it names) work under the
// prefix; auth is its API keys, the app's `authorize` function, or the app's own hook. Through
// inject(), on PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Leasehold } from '../../src/leasehold.js';
import { leaseholdPlugin, type LeaseholdPluginOptions } from '../../src/service/fastify-plugin.js';
import { SECURITY_HEADERS } from '../../src/service/security-headers.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { bearer, call, SCOPED_API_KEYS, SCOPED_KEYS } from '../support/service.js';

after(closeTestDatabase);

type PluginOptions = Omit<LeaseholdPluginOptions, 'leasehold'>;

/** A user's app: its own route and its own body limit, then leasehold under /leasehold. */
async function withUserApp(
  name: string,
  options: PluginOptions,
  fn: (app: FastifyInstance, lh: Leasehold) => Promise<void>,
  before?: (app: FastifyInstance) => void,
): Promise<void> {
  await withSchema(name, async (schema) => {
    const lh = Leasehold.fromEngine(await schema.engine());
    const app = Fastify({ logger: false });
    app.get('/health-of-mine', async () => ({ mine: true }));
    app.post('/echo-of-mine', async (request) => ({ echoed: request.body }));
    before?.(app);
    await app.register(leaseholdPlugin, { prefix: '/leasehold', leasehold: lh, ...options });
    try {
      await fn(app, lh);
    } finally {
      await app.close();
    }
  });
}

const withKeys: PluginOptions = { auth: { apiKeys: SCOPED_API_KEYS } };

describe('leaseholdPlugin in a user’s Fastify app', () => {
  it('leaves the user’s routes alone: no security headers, no auth, no JSON error shape, the app’s own parsers', () =>
    withUserApp('plugin user routes', withKeys, async (app) => {
      const mine = await call(app, 'GET', '/health-of-mine');
      assert.equal(mine.status, 200);
      assert.deepEqual(mine.body, { mine: true });
      for (const header of Object.keys(SECURITY_HEADERS))
        assert.equal(mine.headers[header], undefined, `${header} is not forced on the user route`);
      // The app's text/plain parser is still there (the plugin removes it in its own context).
      const echoed = await call(app, 'POST', '/echo-of-mine', 'hello', {
        'content-type': 'text/plain',
      });
      assert.equal(echoed.status, 200);
      assert.deepEqual(echoed.body, { echoed: 'hello' });
      // The same body to the plugin is refused in leasehold's shape.
      const refused = await call(app, 'POST', '/leasehold/api/tasks', 'hello', {
        'content-type': 'text/plain',
        ...bearer(SCOPED_KEYS.write),
      });
      assert.equal(refused.status, 415);
      assert.equal(refused.body.error?.code, 'unsupported_media_type');
      // Leasehold's paths outside the prefix are the app's 404, not leasehold's.
      const outside = await call(app, 'GET', '/api/leases');
      assert.equal(outside.status, 404);
      assert.equal(outside.body.error, 'Not Found', 'Fastify’s own 404 body');
      assert.equal(outside.headers['content-security-policy'], undefined);
      // Inside the prefix, an unknown path is leasehold's 404, with its headers.
      const unknown = await call(app, 'GET', '/leasehold/api/nothing-here');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error?.code, 'not_found');
      assert.equal(unknown.headers['x-frame-options'], 'DENY');
    }));

  it('serves the API under the prefix with its API keys: enqueue, job get, lease acquire, 401 and 403', () =>
    withUserApp('plugin api keys', withKeys, async (app) => {
      const anonymous = await call(app, 'POST', '/leasehold/api/leases', {
        resource: 'r',
        holder: 'a',
        ttlSeconds: 5,
      });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error?.code, 'unauthorized');
      assert.equal(anonymous.headers['x-content-type-options'], 'nosniff');
      const reader = await call(
        app,
        'POST',
        '/leasehold/api/leases',
        { resource: 'r', holder: 'a', ttlSeconds: 5 },
        bearer(SCOPED_KEYS.read),
      );
      assert.equal(reader.status, 403);
      assert.equal(reader.body.error?.code, 'forbidden');
      const lease = await call(
        app,
        'POST',
        '/leasehold/api/leases',
        { resource: 'r', holder: 'a', ttlSeconds: 5 },
        bearer(SCOPED_KEYS.write),
      );
      assert.equal(lease.status, 201, lease.text);
      assert.equal(lease.body.token, 1);

      const task = await call(
        app,
        'POST',
        '/leasehold/api/tasks',
        { task_data: { n: 1 } },
        bearer(SCOPED_KEYS.write),
      );
      assert.equal(task.status, 201, task.text);
      const job = await call(
        app,
        'GET',
        `/leasehold/api/jobs/${String(task.body.id)}`,
        undefined,
        bearer(SCOPED_KEYS.read),
      );
      assert.equal(job.status, 200, job.text);
      assert.equal(job.body.id, task.body.id);
      // A bad request is answered in leasehold's error shape, naming the field.
      const bad = await call(
        app,
        'POST',
        '/leasehold/api/leases',
        { resource: 'r', holder: 'a', ttlSeconds: 'long' },
        bearer(SCOPED_KEYS.write),
      );
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error?.code, 'invalid_argument');
      assert.match(bad.body.error?.message ?? '', /ttlSeconds/);
    }));

  it('takes the app’s own authorize function: its principal’s scope is checked, null is 401', () =>
    withUserApp(
      'plugin authorize',
      {
        auth: {
          // The app's sessions: a header names the user; async, as a session lookup would be.
          authorize: async (request) => {
            const user = request.headers['x-user'];
            if (user === 'ops') return { name: 'ops', scope: 'admin' };
            if (user === 'viewer') return { name: 'viewer', scope: 'read' };
            return null;
          },
        },
      },
      async (app) => {
        const nobody = await call(app, 'GET', '/leasehold/api/leases');
        assert.equal(nobody.status, 401);
        assert.equal(nobody.body.error?.code, 'unauthorized');
        const viewer = await call(app, 'GET', '/leasehold/api/leases', undefined, {
          'x-user': 'viewer',
        });
        assert.equal(viewer.status, 200, viewer.text);
        const viewerWrites = await call(
          app,
          'POST',
          '/leasehold/api/tasks',
          { task_data: {} },
          { 'x-user': 'viewer' },
        );
        assert.equal(viewerWrites.status, 403);
        assert.match(viewerWrites.body.error?.message ?? '', /"viewer" has "read"/);
        const ops = await call(
          app,
          'POST',
          '/leasehold/api/tasks',
          { task_data: {} },
          { 'x-user': 'ops' },
        );
        assert.equal(ops.status, 201, ops.text);
        // Public routes need nobody.
        assert.equal((await call(app, 'GET', '/leasehold/healthz')).status, 200);
      },
    ));

  it('with auth: false, the app’s own onRequest hook guards the mount, and the user route stays open', () =>
    withUserApp(
      'plugin own hook',
      { auth: false },
      async (app) => {
        const refused = await call(app, 'POST', '/leasehold/api/tasks', { task_data: {} });
        assert.equal(refused.status, 401);
        assert.equal(refused.text, 'session required');
        const passed = await call(
          app,
          'POST',
          '/leasehold/api/tasks',
          { task_data: {} },
          { cookie: 'session=ok' },
        );
        assert.equal(passed.status, 201, passed.text);
        assert.equal((await call(app, 'GET', '/health-of-mine')).status, 200);
      },
      (app) => {
        app.addHook('onRequest', async (request, reply) => {
          if (request.url.startsWith('/leasehold/') && request.headers.cookie !== 'session=ok')
            return reply.code(401).type('text/plain').send('session required');
        });
      },
    ));

  it('refuses a mount without an explicit auth choice, and an empty key list, naming the field', async () => {
    for (const [auth, field] of [
      [undefined, 'auth'],
      [{ apiKeys: [] }, 'auth.apiKeys'],
      [{ authorize: 'yes' }, 'auth.authorize'],
    ] as const) {
      const app = Fastify({ logger: false });
      await assert.rejects(
        async () => {
          await app.register(leaseholdPlugin, {
            prefix: '/leasehold',
            leasehold: {} as Leasehold,
            auth: auth as unknown as LeaseholdPluginOptions['auth'],
          });
        },
        (error: { code?: string; field?: string }) =>
          error.code === 'invalid_argument' && error.field === field,
      );
      await app.close();
    }
  });

  it('serves the dashboard page under the prefix, redirects the prefix to its slash, and the assets the page names load', () =>
    withUserApp('plugin dashboard', withKeys, async (app) => {
      const bare = await app.inject({ method: 'GET', url: '/leasehold?tab=jobs' });
      assert.equal(bare.statusCode, 308);
      // Relative, so that a proxy stripping a prefix of its own keeps it right.
      assert.equal(bare.headers.location, './leasehold/?tab=jobs');
      assert.equal(
        new URL(bare.headers.location, 'http://h/leasehold?tab=jobs').pathname,
        '/leasehold/',
      );
      const page = await app.inject({ method: 'GET', url: '/leasehold/' });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /text\/html/);
      assert.equal(
        page.headers['content-security-policy'],
        SECURITY_HEADERS['content-security-policy'],
      );
      const assets = [...page.body.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map(
        (m) => m[1]!,
      );
      assert.ok(assets.length >= 2, `the page names its script and style: ${assets.join(', ')}`);
      for (const asset of assets) {
        // Resolved as the browser does, against the page's URL.
        const url = new URL(asset, 'http://h/leasehold/').pathname;
        assert.match(url, /^\/leasehold\/assets\//, `${asset} resolves under the prefix`);
        const answer = await app.inject({ method: 'GET', url });
        assert.equal(answer.statusCode, 200, `${url} loads`);
        assert.ok(answer.body.length > 100, `${url} has content`);
      }
    }));

  it('serves the OpenAPI document under the prefix, with the prefix as its server and paths without it, and Swagger UI whose files load', () =>
    withUserApp('plugin openapi', withKeys, async (app) => {
      const doc = await call(app, 'GET', '/leasehold/docs/json');
      assert.equal(doc.status, 200, doc.text);
      assert.deepEqual(doc.body.servers, [{ url: '/leasehold' }]);
      const paths = Object.keys(doc.body.paths as Record<string, unknown>);
      assert.ok(paths.includes('/api/leases'), 'paths are relative to the server');
      assert.ok(
        paths.every((path) => !path.startsWith('/leasehold')),
        'no path carries the prefix twice',
      );
      // Only leasehold's routes are documented, not the user's.
      assert.ok(!paths.includes('/health-of-mine'));
      for (const url of ['/leasehold/docs', '/leasehold/docs/']) {
        const ui = await app.inject({ method: 'GET', url });
        assert.equal(ui.statusCode, 200, url);
        const files = [...ui.body.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map(
          (m) => new URL(m[1]!, `http://h${url}`).pathname,
        );
        assert.ok(files.length >= 3, `${url} names its files`);
        for (const file of files)
          assert.equal((await app.inject({ method: 'GET', url: file })).statusCode, 200, file);
      }
    }));
});
