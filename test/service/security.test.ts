// Security properties of the HTTP service: security headers on every kind of answer, no CORS,
// Swagger UI still working under its policy, API keys kept only as digests and never logged.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import pino from 'pino';
import { chromium } from 'playwright-core';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { ApiKeyAuth, hashApiKeys, parseApiKeys } from '../../src/service/auth.js';
import { jsonDepth, MAX_JSON_DEPTH } from '../../src/service/json-body.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { bearer, call, withApp } from '../support/service.js';

after(closeTestDatabase);

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Every kind of answer: API success and errors, the page, an asset, the docs, a bad URL. */
const ANSWERS: readonly [string, string, unknown?][] = [
  ['GET', '/api/leases'],
  ['POST', '/api/leases', { resource: 'r', holder: 'h' }],
  ['POST', '/api/leases', { resource: 1 }],
  ['GET', '/api/leases/999'],
  ['GET', '/no/such/route'],
  ['GET', '/%'],
  ['GET', '/healthz'],
  ['GET', '/metrics'],
  ['GET', '/'],
  ['GET', '/assets/app.js'],
  ['GET', '/docs'],
  ['GET', '/docs/json'],
];

describe('security headers', () => {
  it('sends CSP, nosniff, no framing and no referrer on every answer, and no X-Powered-By', () =>
    withApp('security headers', async (app) => {
      for (const [method, url, body] of ANSWERS) {
        const answer = await call(app, method, url, body);
        const what = `${method} ${url} (${answer.status})`;
        const csp = String(answer.headers['content-security-policy'] ?? '');
        assert.match(csp, /default-src 'self'/, `CSP on ${what}`);
        assert.match(csp, /frame-ancestors 'none'/, `frame-ancestors on ${what}`);
        assert.match(csp, /script-src 'self'(;|$)/, `scripts from this origin only on ${what}`);
        assert.equal(answer.headers['x-content-type-options'], 'nosniff', what);
        assert.equal(answer.headers['x-frame-options'], 'DENY', what);
        assert.equal(answer.headers['referrer-policy'], 'no-referrer', what);
        assert.equal(answer.headers['x-powered-by'], undefined, what);
        if (!url.startsWith('/docs'))
          assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, `strict policy on ${what}`);
      }
    }));

  it('serves Swagger UI at /docs with its scripts, styles and the OpenAPI document', () =>
    withApp('security docs', async (app) => {
      const page = await call(app, 'GET', '/docs');
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /<script>|<script [^>]*>[^<\s]/, 'no inline script');
      const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      assert.ok(assets.some((a) => a.endsWith('swagger-ui-bundle.js')));
      for (const asset of assets) {
        const url = asset.startsWith('/') ? asset : `/docs/${asset.replace(/^\.\//, '')}`;
        const loaded = await call(app, 'GET', url);
        assert.equal(loaded.status, 200, `${url} loads`);
      }
      const initializer = await call(app, 'GET', '/docs/static/swagger-initializer.js');
      assert.equal(initializer.status, 200);
      const spec = await call(app, 'GET', '/docs/json');
      assert.equal(spec.status, 200);
      assert.ok(spec.body.openapi, 'the OpenAPI document');
    }));
});

describe(
  'Swagger UI in a browser',
  { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM}` },
  () => {
    it('renders /docs under its Content-Security-Policy without console errors', () =>
      withSchema('security docs browser', async (schema) => {
        const lh = Leasehold.fromEngine(await schema.engine());
        const server = await startServer({ lh, port: 0, maintenance: false });
        const browser = await chromium.launch({
          executablePath: CHROMIUM,
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--no-first-run',
            '--disable-background-networking',
          ],
        });
        try {
          const page = await browser.newPage();
          const errors: string[] = [];
          page.on('console', (m) => {
            if (m.type() === 'error') errors.push(m.text());
          });
          page.on('pageerror', (e) => errors.push(e.message));
          await page.goto(`${server.url}/docs`);
          await page.locator('.swagger-ui .info .title').waitFor({ timeout: 15_000 });
          assert.match(await page.locator('.swagger-ui .info .title').innerText(), /leasehold/);
          await page.locator('.opblock').first().waitFor({ timeout: 15_000 });
          assert.deepEqual(errors, [], 'no console errors (a CSP refusal would be one)');
        } finally {
          await browser.close();
          await server.close();
        }
      }));
  },
);

describe('JSON bodies', () => {
  it('measures nesting without counting brackets inside strings', () => {
    assert.equal(jsonDepth('{}'), 1);
    assert.equal(jsonDepth('{"a":[[1],{"b":[]}]}'), 4);
    assert.equal(jsonDepth('{"a":"[[[[{{{{"}'), 1);
    assert.equal(jsonDepth('{"a":"\\"[[[[\\""}'), 1, 'an escaped quote does not end the string');
    assert.equal(jsonDepth('"plain"'), 0);
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more with 400`, () =>
    withApp('security json depth', async (app) => {
      // {"task_data":{"a": ...}} is two levels before the arrays.
      const body = (depth: number): string =>
        `{"task_data":{"a":${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}}}`;
      const json = { 'content-type': 'application/json' };
      const deepest = await call(app, 'POST', '/api/tasks', body(MAX_JSON_DEPTH), json);
      assert.equal(deepest.status, 201, deepest.text);
      const deeper = await call(app, 'POST', '/api/tasks', body(MAX_JSON_DEPTH + 1), json);
      assert.equal(deeper.status, 400);
      assert.equal(deeper.body.error?.code, 'invalid_argument');
      assert.match(deeper.body.error!.message, /nest deeper than 64/);
    }));
});

describe('CORS', () => {
  it('is off: no Access-Control-Allow-* on answers or preflights from another origin', () =>
    withApp('security cors', async (app) => {
      const origin = { origin: 'https://evil.example' };
      const preflight = await call(app, 'OPTIONS', '/api/leases', undefined, {
        ...origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      });
      assert.equal(preflight.status, 404, 'a preflight is not answered');
      for (const [method, url, body] of ANSWERS) {
        const answer = await call(app, method, url, body, origin);
        const cors = Object.keys(answer.headers).filter((h) => h.startsWith('access-control-'));
        assert.deepEqual(cors, [], `${method} ${url}`);
      }
      const cors = Object.keys(preflight.headers).filter((h) => h.startsWith('access-control-'));
      assert.deepEqual(cors, []);
    }));
});

describe('API keys', () => {
  const key = 'k-0123456789abcdef-0123456789';

  it('keeps only SHA-256 digests of the configured keys', () => {
    const [hashed] = hashApiKeys(parseApiKeys(`ops:write:${key}`));
    assert.deepEqual(Object.keys(hashed!).sort(), ['name', 'scope', 'sha256']);
    assert.equal(hashed!.sha256.length, 32);
    const auth = new ApiKeyAuth([{ name: 'ops', scope: 'write', key }]);
    assert.doesNotMatch(JSON.stringify(auth), new RegExp(key), 'the key is not a field');
    assert.throws(() => hashApiKeys([{ name: 'x', scope: 'read', key: 'short' }]), /16/);
    assert.throws(
      () => hashApiKeys([{ name: 'x', scope: 'read', sha256: Buffer.alloc(3) }]),
      /32-byte/,
    );
  });

  it('accepts a key configured by its digest only', () =>
    withApp(
      'security hashed key',
      async (app) => {
        assert.equal((await call(app, 'GET', '/api/leases', undefined, bearer(key))).status, 200);
        assert.equal(
          (await call(app, 'GET', '/api/leases', undefined, bearer(`${key}x`))).status,
          401,
        );
      },
      { apiKeys: hashApiKeys([{ name: 'ops', scope: 'read', key }]) },
    ));

  it('never writes a key to the log, accepted, refused or forbidden', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const readKey = 'r-0123456789abcdef-0123456789';
    await withApp(
      'security key logs',
      async (app) => {
        await call(app, 'GET', '/api/leases', undefined, bearer(readKey));
        await call(app, 'POST', '/api/leases', { resource: 'r', holder: 'h' }, bearer(readKey));
        await call(app, 'GET', '/api/leases', undefined, bearer(`${readKey}-wrong`));
        await call(app, 'GET', '/api/leases', undefined, { 'x-api-key': readKey });
        await call(app, 'GET', '/%', undefined, bearer(readKey));
      },
      {
        apiKeys: [{ name: 'reader', scope: 'read', key: readKey }],
        logger: pino({ level: 'trace' }, sink),
      },
    );
    const log = lines.join('');
    assert.ok(log.includes('"reqId"'), 'requests were logged');
    assert.ok(!log.includes(readKey), 'no key in the log');
  });

  it('holds no plain key in memory once the keys are configured (heap snapshot)', async () => {
    const secret = randomBytes(24).toString('hex');
    const probe = async (mode: string): Promise<{ found: boolean; keys: number }> => {
      const { stdout } = await run(
        process.execPath,
        [
          '--expose-gc',
          '--import',
          'tsx',
          'test/service/key-heap-probe.ts',
          Buffer.from(secret).toString('hex'),
          mode,
        ],
        { cwd: ROOT, env: { ...process.env, LEASEHOLD_API_KEYS: `ops:admin:${secret}` } },
      );
      return JSON.parse(stdout.trim().split('\n').pop()!) as { found: boolean; keys: number };
    };
    const kept = await probe('keep');
    assert.equal(kept.found, true, 'the search finds a key that is kept (control)');
    const hashed = await probe('hash');
    assert.equal(hashed.keys, 1);
    assert.equal(hashed.found, false, 'the plain key is gone once hashed');
  });
});
