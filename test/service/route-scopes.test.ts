// Authorization fails closed (issue 21, item 6). Every route the app registers is enumerated as
// Fastify registers it (the onRoute hook that also refuses unscoped routes records each one), not
// from a hand-written table, so a route added later is checked without anyone listing it. For each route, a probe hook added after the app
// is built answers 299 with the route's declared scope once the request has passed
// authentication and the scope check; so each answer is exactly 401 (no key), 403 (below the
// scope) or 299 (let through), and no handler runs. The expected answer for anonymous, read,
// write and admin callers is derived from the scope the route declares. A route that declares
// no scope cannot be registered at all. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { scopedRoutes, type ScopedRoute } from '../../src/service/route-scopes.js';
import { closeTestDatabase } from '../support/database.js';
import { SCOPED_API_KEYS, SCOPED_KEYS, bearer, withApp } from '../support/service.js';

after(closeTestDatabase);

const KEYS = SCOPED_KEYS;
const API_KEYS = SCOPED_API_KEYS;

type Caller = 'anonymous' | 'read' | 'write' | 'admin';
const CALLERS: readonly Caller[] = ['anonymous', 'read', 'write', 'admin'];
const DECLARED = ['public', 'read', 'write', 'admin'] as const;
type Declared = (typeof DECLARED)[number];
const RANK: Record<Caller | Declared, number> = {
  anonymous: 0,
  public: 0,
  read: 1,
  write: 2,
  admin: 3,
};
const PROBED = 299;

/** A concrete URL that the route matches: a number for each parameter, a name for a wildcard. */
const concrete = (url: string): string => url.replace(/:[A-Za-z]+/g, '1').replace(/\*$/, 'x');

const headersOf = (caller: Caller): Record<string, string> =>
  caller === 'anonymous' ? {} : bearer(KEYS[caller]);

/** After authentication and the scope check, answer at once with the route that was reached. */
function addProbe(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404) return done();
    void reply
      .code(PROBED)
      .header('x-route', `${String(request.routeOptions.url)}`)
      .header('x-route-methods', String(request.routeOptions.method))
      .header('x-route-scope', String(request.routeOptions.config.scope))
      .send();
    done();
  });
}

async function probe(
  app: FastifyInstance,
  route: Pick<ScopedRoute, 'method' | 'url'>,
  caller: Caller,
): Promise<{
  status: number;
  reached: string;
  methods: string[];
  scope: string;
  code: string | undefined;
}> {
  const response = await app.inject({
    method: route.method as 'GET',
    url: concrete(route.url),
    headers: headersOf(caller),
  });
  const code =
    response.statusCode === PROBED || route.method === 'HEAD'
      ? undefined
      : (JSON.parse(response.body) as { error?: { code?: string } }).error?.code;
  return {
    status: response.statusCode,
    reached: String(response.headers['x-route']),
    methods: String(response.headers['x-route-methods']).split(','),
    scope: String(response.headers['x-route-scope']),
    code,
  };
}

describe('route scopes', () => {
  it('every registered route declares a scope, and anonymous, read, write and admin callers get exactly what it allows', () =>
    withApp(
      'route scopes',
      async (app) => {
        addProbe(app);
        const routes = scopedRoutes(app);
        assert.ok(routes.length >= 70, `found only ${routes.length} routes`);
        const byScope: Record<string, string[]> = {};
        for (const route of routes) {
          const what = `${route.method} ${route.url}`;
          // The admin key passes every route-level check, so it reaches the probe and tells which
          // scope the route declares.
          const declared = await probe(app, route, 'admin');
          assert.equal(declared.status, PROBED, `${what} is reachable with the admin key`);
          assert.equal(declared.reached, route.url, `${concrete(route.url)} reaches ${what}`);
          assert.ok(declared.methods.includes(route.method), `${what} answers ${route.method}`);
          assert.ok(
            (DECLARED as readonly string[]).includes(declared.scope),
            `${what} declares a scope (public, read, write or admin), not ${declared.scope}`,
          );
          const scope = declared.scope as Declared;
          (byScope[scope] ??= []).push(what);
          for (const caller of CALLERS) {
            const answer = await probe(app, route, caller);
            const expected =
              RANK[caller] >= RANK[scope] ? PROBED : caller === 'anonymous' ? 401 : 403;
            assert.equal(answer.status, expected, `${what} as ${caller} (route needs ${scope})`);
            if (expected === 401 && route.method !== 'HEAD')
              assert.equal(answer.code, 'unauthorized', what);
            if (expected === 403 && route.method !== 'HEAD')
              assert.equal(answer.code, 'forbidden', what);
          }
        }
        // The public routes are these and no others: the health check, the API documentation
        // (Swagger UI, its files and the OpenAPI document) and the dashboard page with its
        // assets, which holds no data.
        for (const what of byScope.public ?? [])
          assert.match(what, /^(GET|HEAD) (\/healthz|\/docs(\/.*)?|\/|\/assets\/.*)$/, what);
        assert.ok(byScope.public?.includes('GET /healthz'), 'the health check is public');
        assert.ok(byScope.public?.includes('GET /docs/json'), 'the OpenAPI document is public');
        for (const what of [
          'GET /api/leases',
          'GET /metrics',
          'GET /api/events',
          'GET /api/queues',
          'GET /api/jobs/:id/explain',
          'GET /api/jobs/:id/wait',
          'GET /api/jobs/search',
          'GET /api/leases/:resource/terms',
          'GET /api/leaders/:election/terms',
        ])
          assert.ok(byScope.read?.includes(what), `${what} needs read`);
        // Pause and resume are operator actions on jobs, as retry and cancel (decision 0242).
        for (const what of [
          'POST /api/leases',
          'DELETE /api/leases/:id',
          'POST /api/tasks/next',
          'POST /api/queues/:name/pause',
          'POST /api/queues/:name/resume',
          'POST /api/queues/:name/jobs/retry',
          'POST /api/queues/:name/jobs/cancel',
          'POST /api/queues/:name/flows',
          'POST /api/jobs/selection/retry',
          'POST /api/jobs/selection/cancel',
        ])
          assert.ok(byScope.write?.includes(what), `${what} needs write`);
        for (const what of [
          'POST /api/generator/start',
          'DELETE /api/jobs/:id',
          'DELETE /api/queues/:name/jobs',
          'PUT /api/queues/:name/settings',
          'POST /api/jobs/selection/delete',
        ])
          assert.ok(byScope.admin?.includes(what), `${what} needs admin`);
        // Fastify serves a plugin's root route under a second URL with a trailing slash without
        // telling the onRoute hook; it shares the route's options, so it is public too.
        for (const caller of CALLERS)
          assert.equal((await probe(app, { method: 'GET', url: '/docs/' }, caller)).status, PROBED);
        // An unknown URL is answered 404 to anyone: it names no route, so no scope applies.
        const unknown = await app.inject({ method: 'GET', url: '/api/nothing-here' });
        assert.equal(unknown.statusCode, 404);
        assert.equal(
          (JSON.parse(unknown.body) as { error: { code: string } }).error.code,
          'not_found',
        );
      },
      { apiKeys: API_KEYS },
    ));

  it('with no keys configured (loopback only) every route is let through', () =>
    withApp('route scopes off', async (app) => {
      addProbe(app);
      for (const route of scopedRoutes(app))
        assert.equal(
          (await probe(app, route, 'anonymous')).status,
          PROBED,
          `${route.method} ${route.url}`,
        );
    }));

  it('refuses to register a route that declares no scope, or an unknown one', () =>
    withApp(
      'route scopes refused',
      async (app) => {
        const handler = async (): Promise<string> => 'open';
        assert.throws(
          () => app.get('/api/unscoped', handler),
          (error: Error) =>
            error.name === 'UnscopedRouteError' &&
            /GET \/api\/unscoped declares no scope/.test(error.message),
        );
        assert.throws(
          () => app.post('/api/misspelt', { config: { scope: 'wirte' as 'write' } }, handler),
          (error: Error) => error.name === 'UnscopedRouteError' && /"wirte"/.test(error.message),
        );
        // Inside a plugin too: the build (register, then ready) fails instead of serving it.
        await assert.rejects(
          async () => {
            await app.register(async (plugin) => {
              plugin.get('/api/in-plugin', handler);
            });
          },
          (error: Error) => error.name === 'UnscopedRouteError',
        );
      },
      { apiKeys: API_KEYS },
    ));
});
