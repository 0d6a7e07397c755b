// The service in an Express 5 app and in a plain node:http server (issue 29, part 4; decision
// 0262): real servers on port 0, real HTTP requests with fetch. Under Express the adapter is
// mounted at /leasehold beside an Express route; the API, its error shape, the dashboard (page,
// redirect, assets) and Swagger UI work under the mount; mounted after express.json() it says so
// instead of hanging. On PostgreSQL.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import express from 'express';
import { Leasehold } from '../../src/leasehold.js';
import {
  leaseholdMiddleware,
  type LeaseholdMiddleware,
  type LeaseholdMiddlewareOptions,
} from '../../src/service/express-adapter.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { bearer, SCOPED_API_KEYS, SCOPED_KEYS } from '../support/service.js';

after(closeTestDatabase);

const AUTH: LeaseholdMiddlewareOptions['auth'] = { apiKeys: SCOPED_API_KEYS };

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closed(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A server built by `serve` around the adapter, listening; everything closed after `fn`. */
async function withServer(
  name: string,
  options: Omit<LeaseholdMiddlewareOptions, 'leasehold' | 'auth'>,
  serve: (leasehold: LeaseholdMiddleware) => Server,
  fn: (base: string) => Promise<void>,
): Promise<void> {
  await withSchema(name, async (schema) => {
    const lh = Leasehold.fromEngine(await schema.engine());
    const leasehold = await leaseholdMiddleware({ leasehold: lh, auth: AUTH, ...options });
    const server = serve(leasehold);
    try {
      await fn(await listening(server));
    } finally {
      await closed(server);
      await leasehold.close();
    }
  });
}

function expressApp(leasehold: LeaseholdMiddleware, bodyParserFirst = false): Server {
  const app = express();
  if (bodyParserFirst) app.use(express.json());
  app.get('/mine', (_req, res) => {
    res.json({ mine: true });
  });
  app.use('/leasehold', leasehold);
  return createServer(app);
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

const post = (body: unknown, key: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...bearer(key) },
  body: JSON.stringify(body),
});

/** Loads the dashboard at `<base><mount>` as a browser would: redirect, page, then its assets. */
async function loadDashboard(base: string, mount: string): Promise<void> {
  const bare = await fetch(`${base}${mount}`, { redirect: 'manual' });
  assert.equal(bare.status, 308);
  const location = new URL(bare.headers.get('location')!, `${base}${mount}`);
  assert.equal(location.pathname, `${mount}/`);
  const page = await fetch(`${base}${mount}`);
  assert.equal(page.status, 200);
  assert.equal(page.url, `${base}${mount}/`, 'fetch followed the redirect');
  const html = await page.text();
  assert.match(html, /<div id="app">/);
  const assets = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map(
    (m) => new URL(m[1]!, page.url).href,
  );
  assert.ok(assets.length >= 2, 'the page names its script and style');
  for (const asset of assets) {
    assert.ok(asset.startsWith(`${base}${mount}/assets/`), `${asset} is under the mount`);
    const answer = await fetch(asset);
    assert.equal(answer.status, 200, asset);
    assert.ok((await answer.text()).length > 100, `${asset} has content`);
  }
}

describe('leaseholdMiddleware', () => {
  it('in Express at /leasehold: the Express route beside it, enqueue and job get, a bad request in leasehold’s error shape', () =>
    withServer(
      'express api',
      {},
      (leasehold) => expressApp(leasehold),
      async (base) => {
        const mine = await fetch(`${base}/mine`);
        assert.equal(mine.status, 200);
        assert.deepEqual(await json(mine), { mine: true });
        assert.equal(mine.headers.get('content-security-policy'), null, 'Express route untouched');

        const created = await fetch(
          `${base}/leasehold/api/tasks`,
          post({ task_data: { n: 1 } }, SCOPED_KEYS.write),
        );
        assert.equal(created.status, 201);
        const task = await json(created);
        const job = await fetch(`${base}/leasehold/api/jobs/${String(task.id)}`, {
          headers: bearer(SCOPED_KEYS.read),
        });
        assert.equal(job.status, 200);
        assert.equal((await json(job)).id, task.id);
        assert.equal(
          job.headers.get('x-frame-options'),
          'DENY',
          'leasehold’s headers on its answers',
        );

        const bad = await fetch(
          `${base}/leasehold/api/leases`,
          post({ resource: 'r', holder: 'a', ttlSeconds: 'long' }, SCOPED_KEYS.write),
        );
        assert.equal(bad.status, 400);
        const error = (await json(bad)).error as { code: string; message: string };
        assert.equal(error.code, 'invalid_argument');
        assert.match(error.message, /ttlSeconds/);

        const anonymous = await fetch(`${base}/leasehold/api/leases`);
        assert.equal(anonymous.status, 401);
        assert.equal(((await json(anonymous)).error as { code: string }).code, 'unauthorized');
        const unknown = await fetch(`${base}/leasehold/api/nothing-here`);
        assert.equal(unknown.status, 404);
        assert.equal(((await json(unknown)).error as { code: string }).code, 'not_found');
      },
    ));

  it('in Express: the dashboard and Swagger UI load under the mount, and the OpenAPI server is relative to the document', () =>
    withServer(
      'express pages',
      {},
      (leasehold) => expressApp(leasehold),
      async (base) => {
        await loadDashboard(base, '/leasehold');
        const doc = await fetch(`${base}/leasehold/docs/json`);
        assert.equal(doc.status, 200);
        const servers = (await json(doc)).servers as { url: string }[];
        // What Swagger UI does with it: resolved against the document's URL.
        assert.equal(
          new URL(servers[0]!.url, `${base}/leasehold/docs/json`).pathname,
          '/leasehold/',
        );
        const bare = await fetch(`${base}/leasehold/docs`);
        assert.equal(bare.url, `${base}/leasehold/docs/`, 'redirected to the trailing slash');
        const files = [...(await bare.text()).matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map(
          (m) => new URL(m[1]!, bare.url).href,
        );
        assert.ok(files.length >= 3);
        for (const file of files) assert.equal((await fetch(file)).status, 200, file);
      },
    ));

  it('mounted after express.json(), answers a request with a body with an error naming the mistake instead of hanging', () =>
    withServer(
      'express after body parser',
      {},
      (leasehold) => expressApp(leasehold, true),
      async (base) => {
        const answer = await fetch(
          `${base}/leasehold/api/tasks`,
          post({ task_data: {} }, SCOPED_KEYS.write),
        );
        assert.equal(answer.status, 500);
        const error = (await json(answer)).error as { code: string; message: string };
        assert.equal(error.code, 'internal');
        assert.match(error.message, /mount leasehold before body parsers/);
        // Requests without a body are not affected.
        const leases = await fetch(`${base}/leasehold/api/leases`, {
          headers: bearer(SCOPED_KEYS.read),
        });
        assert.equal(leases.status, 200);
      },
    ));

  it('in a plain node:http server with basePath: its own requests, the others to the server’s handler', () =>
    withServer(
      'node http',
      { basePath: '/leasehold' },
      (leasehold) =>
        createServer((req, res) =>
          leasehold(req, res, () => {
            res.writeHead(200, { 'content-type': 'text/plain' }).end('not leasehold');
          }),
        ),
      async (base) => {
        const other = await fetch(`${base}/elsewhere`);
        assert.equal(await other.text(), 'not leasehold');
        // A path that only begins like the base path is not under it.
        assert.equal(await (await fetch(`${base}/leaseholders`)).text(), 'not leasehold');
        const lease = await fetch(
          `${base}/leasehold/api/leases`,
          post({ resource: 'r', holder: 'a', ttlSeconds: 5 }, SCOPED_KEYS.write),
        );
        assert.equal(lease.status, 201);
        assert.equal((await json(lease)).token, 1);
        const health = await fetch(`${base}/leasehold/healthz?x=1`);
        assert.equal(health.status, 200);
        await loadDashboard(base, '/leasehold');
      },
    ));

  it('as the whole node:http server, without next: outside basePath is its 404; a bad basePath is refused', async () => {
    await withServer(
      'node http alone',
      { basePath: '/leasehold/' },
      (leasehold) => createServer(leasehold),
      async (base) => {
        const outside = await fetch(`${base}/api/leases`);
        assert.equal(outside.status, 404);
        assert.equal(((await json(outside)).error as { code: string }).code, 'not_found');
        assert.equal((await fetch(`${base}/leasehold/healthz`)).status, 200);
      },
    );
    await assert.rejects(
      leaseholdMiddleware({ leasehold: {} as Leasehold, auth: AUTH, basePath: 'leasehold' }),
      (error: { code?: string; field?: string }) =>
        error.code === 'invalid_argument' && error.field === 'basePath',
    );
  });
});
