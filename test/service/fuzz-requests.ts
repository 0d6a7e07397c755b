/**
 * fast-check arbitraries for HTTP requests against the service: every route with bodies that
 * are nearly right (one field replaced by something else), wrong in shape, malformed, huge or
 * deeply nested; ids that are overlong, negative, fractional or encoded; paths with `..`,
 * `%2e%2e` and double slashes; query strings of junk; odd headers and content types.
 * Nearly right bodies matter most: they get past validation into the engine and the database.
 */
import fc from 'fast-check';

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Sent as it is (a string body is not re-encoded). */
  payload?: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Every route but GET /api/events, whose stream never ends, and GET /api/jobs/:id/wait, a long
 * poll that would hold a fuzzed request up to 30 s (each has a test of its own).
 */
const ROUTES: readonly [Method, string][] = [
  ['POST', '/api/leases'],
  ['PUT', '/api/leases/renew'],
  ['DELETE', '/api/leases/release'],
  ['GET', '/api/leases'],
  ['GET', '/api/leases/active'],
  ['GET', '/api/leases/expired'],
  ['GET', '/api/leases/renewed'],
  ['GET', '/api/leases/released'],
  ['GET', '/api/leases/:id'],
  ['DELETE', '/api/leases/:id'],
  ['POST', '/api/tasks'],
  ['GET', '/api/tasks'],
  ['GET', '/api/tasks/processed'],
  ['GET', '/api/tasks/started'],
  ['GET', '/api/tasks/:id'],
  ['POST', '/api/tasks/next'],
  ['PUT', '/api/tasks/:id/heartbeat'],
  ['PUT', '/api/tasks/:id/complete'],
  ['PUT', '/api/tasks/:id/fail'],
  ['PUT', '/api/tasks/:id/hand-back'],
  ['PUT', '/api/tasks/:id/release'],
  ['POST', '/api/tasks/:id/cancel'],
  ['POST', '/api/tasks/:id/retry'],
  ['GET', '/api/generator'],
  ['POST', '/api/generator/start'],
  ['POST', '/api/generator/stop'],
  ['GET', '/api/jobs'],
  ['GET', '/api/jobs/:id'],
  ['POST', '/api/jobs/:id/retry'],
  ['POST', '/api/jobs/:id/cancel'],
  ['DELETE', '/api/jobs/:id'],
  ['GET', '/api/jobs/:id/explain'],
  ['GET', '/api/queues'],
  ['POST', '/api/queues/:name/pause'],
  ['POST', '/api/queues/:name/resume'],
  ['PUT', '/api/queues/:name/settings'],
  ['POST', '/api/queues/:name/jobs/retry'],
  ['POST', '/api/queues/:name/jobs/cancel'],
  ['DELETE', '/api/queues/:name/jobs'],
  ['GET', '/api/leaders'],
  ['GET', '/api/schedules'],
  ['GET', '/api/workers'],
  ['GET', '/metrics'],
  ['GET', '/healthz'],
  ['GET', '/docs/json'],
  ['GET', '/'],
];

/** The fields each body route knows, with a valid value for each. */
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  'POST /api/leases': { resource: 'r1', holder: 'h1', ttlSeconds: 30, metadata: { a: 1 } },
  'PUT /api/leases/renew': { resource: 'r1', holder: 'h1', token: 1, ttlSeconds: 30 },
  'DELETE /api/leases/release': { resource: 'r1', holder: 'h1', token: 1 },
  'DELETE /api/leases/:id': { holder: 'h1', token: 1 },
  'POST /api/tasks': {
    task_data: { n: 1 },
    scheduled_at: '2030-01-01T00:00:00Z',
    key: 'k1',
    partition_key: 'p1',
    priority: 0,
    max_attempts: 3,
    on_conflict: 'replace',
  },
  'POST /api/tasks/next': { processor: 'w1', lease_seconds: 30 },
  'PUT /api/tasks/:id/heartbeat': { processor: 'w1', token: 1, lease_seconds: 30 },
  'PUT /api/tasks/:id/complete': { processor: 'w1', token: 1, task_output: { ok: true } },
  'PUT /api/tasks/:id/fail': { processor: 'w1', token: 1, error: 'boom', retry_in_seconds: 1 },
  'PUT /api/tasks/:id/hand-back': { processor: 'w1', token: 1 },
  'PUT /api/tasks/:id/release': { processor: 'w1', token: 1 },
  'PUT /api/queues/:name/settings': {
    concurrency: 2,
    perKeyConcurrency: null,
    rate: { limit: 10, per: '1s' },
    fairness: 'oldest',
  },
  'POST /api/queues/:name/jobs/retry': {
    status: ['dead', 'cancelled'],
    type: 't1',
    key: 'k1',
    partitionKey: 'p1',
    createdSince: '2020-01-01T00:00:00Z',
    createdBefore: '2030-01-01T00:00:00Z',
    batchSize: 100,
  },
  'POST /api/queues/:name/jobs/cancel': { status: 'pending', type: 't1', batchSize: 100 },
};

/** Like encodeURIComponent, but a lone surrogate is sent as U+FFFD instead of throwing. */
const percentEncode = (text: string): string =>
  [...Buffer.from(text, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

const SPECIAL_NUMBERS = [0, -1, 1, 0.5, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, 1e-320, 86_401];

const oddString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\u202e',
    '\ufeff',
    '../../etc/passwd',
    '%2e%2e',
    '__proto__',
    'constructor',
    'null',
    '0',
    "'; DROP TABLE leases; --",
  ),
  fc.integer({ min: 190, max: 600 }).map((n) => 'x'.repeat(n)),
);

/** Any JSON value, including odd numbers and strings, nested a little. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  oddString,
  fc.constantFrom(...SPECIAL_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(oddString, { maxLength: 3 }),
  fc.dictionary(oddString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

/** A route's valid body with some fields replaced, dropped or added. */
function nearlyValidBody(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const fields = Object.keys(valid);
  return fc
    .record({
      // Often every field, so the request passes validation and reaches the database.
      keep: fc.oneof(fc.constant(fields), fc.subarray(fields)),
      replace: fc.dictionary(fc.constantFrom(...fields), oddValue, { maxKeys: 2 }),
      replaceAny: fc.oneof({ arbitrary: fc.constant(true), weight: 2 }, fc.constant(false)),
      extra: fc.dictionary(oddString, oddValue, { maxKeys: 1 }),
      addExtra: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, fc.constant(true)),
    })
    .map(({ keep, replace, replaceAny, extra, addExtra }) => {
      const body: Record<string, unknown> = {};
      for (const f of keep) body[f] = valid[f];
      if (replaceAny) Object.assign(body, replace);
      if (addExtra) Object.assign(body, extra);
      return body;
    });
}

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

/** Bodies that are not JSON objects at all, or not JSON, or too big. */
const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '',
    '{',
    '}',
    '{"resource":',
    '{"a":1,}',
    "{'a':1}",
    'null',
    '[]',
    '"str"',
    '1e999',
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{"polluted":1}}}',
    '{"resource":"r","resource":"s","holder":"h"}',
    '\ufeff{"resource":"r","holder":"h"}',
    `{"task_data":{"a":${nested(63)}}}`,
    `{"task_data":{"a":${nested(20_000)}}}`,
    `{"resource":"r","holder":"h","metadata":{"a":${nested(5_000)}}}`,
    `{"task_data":{"s":"${'x'.repeat(70_000)}"}}`,
    `{"resource":"${'r'.repeat(65_000)}","holder":"h"}`,
  ),
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '*/*',
  '',
);

const id = fc.oneof(
  fc.integer({ min: 1, max: 6 }).map(String),
  fc.constantFrom(
    '0',
    '-1',
    '1.5',
    '1e3',
    '0x10',
    '01',
    '+1',
    ' 1',
    '9007199254740992',
    '99999999999999999999999999999999',
    '..',
    '%2e%2e',
    '%2e%2e%2f%2e%2e',
    '1%00',
    '%00',
    'null',
    'NaN',
    '%F0%9F%92%A5',
    '1;DROP',
  ),
  fc.integer({ min: 201, max: 400 }).map((n) => '9'.repeat(n)),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }).map(percentEncode),
);

/** Path tricks applied to a route's path. */
const pathTricks = fc.constantFrom<(path: string) => string>(
  (p) => `${p}/`,
  (p) => `/${p}`,
  (p) => p.replace('/api/', '/api//'),
  (p) => p.replace('/api/', '/api/../api/'),
  (p) => p.replace('/api/', '/api/%2e%2e/api/'),
  (p) => p.replace('/api/', '/API/'),
  (p) => `${p}/..`,
  (p) => `${p}/%2e%2e/%2e%2e/etc/passwd`,
  (p) => `${p};a=b`,
  (p) => `${p}%00`,
  (p) => `${p}%`,
  (p) => `${p}%zz`,
  (p) => `${p}#frag`,
  (p) => p.replace(/\//g, '%2f'),
);

/** Two requests in three keep the route's path, so the body and the id get tested. */
const pathTrick = fc.oneof(
  { arbitrary: fc.constant((p: string) => p), weight: 2 },
  { arbitrary: pathTricks, weight: 1 },
);

const queryString = fc.oneof(
  fc.constant(''),
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.constantFrom('limit', 'offset', 'prefix', 'queue', 'status', 'partitionKey', 'x'),
        fc.oneof(
          fc.constantFrom('1', '0', '-1', '1.5', '100000', 'abc', '', '%00', '%zz', '__proto__'),
          oddString.map(percentEncode),
        ),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  fc.constantFrom(
    '?',
    '??',
    '?&&&',
    '?limit',
    '?limit=1&limit=2',
    '?__proto__[x]=1',
    '?constructor[prototype][x]=1',
    `?prefix=${'a'.repeat(5_000)}`,
    '?a[b][c][d]=1',
  ),
);

const oddHeaders = fc.record(
  {
    authorization: fc.constantFrom(
      'Bearer ',
      'Bearer x',
      'Basic dXNlcjpwYXNz',
      'bearer lowercase-key-0000000',
      `Bearer ${'k'.repeat(5_000)}`,
    ),
    'x-api-key': fc.constantFrom('', 'x', 'Bearer x'),
    accept: fc.constantFrom('text/html', 'application/xml', '*/*', 'nonsense'),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', 'x'),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'not an ip', '::1, 10.0.0.1'),
    'x-http-method-override': fc.constantFrom('DELETE', 'PATCH'),
    origin: fc.constantFrom('http://evil.example', 'null'),
    cookie: fc.constantFrom('a=b', '__proto__=1'),
  },
  { requiredKeys: [] },
);

/** One request: a route (or a stray method on it), its path mutated, a body, headers. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    // Mostly the route's own method; one request in eight tries another.
    strayMethod: fc.oneof(
      { arbitrary: fc.constant(null), weight: 7 },
      { arbitrary: fc.constantFrom('PATCH', 'OPTIONS', 'HEAD', 'GET', 'POST', 'PUT'), weight: 1 },
    ),
    id,
    trick: pathTrick,
    query: queryString,
    bodyKind: fc.constantFrom('nearly-valid', 'nearly-valid', 'nearly-valid', 'raw', 'none'),
    raw: rawBody,
    contentType,
    headers: oddHeaders,
  })
  .chain((r) => {
    const key = `${r.route[0]} ${r.route[1]}`;
    const valid = VALID_BODIES[key];
    return (valid ? nearlyValidBody(valid) : fc.jsonValue({ maxDepth: 2 })).map((body) => ({
      ...r,
      body,
    }));
  })
  .map((r) => {
    const method = r.strayMethod ?? r.route[0];
    const path = r.trick(r.route[1].replace(':id', r.id).replace(':name', r.id));
    const headers: Record<string, string> = { ...r.headers };
    let payload: string | undefined;
    if (r.bodyKind !== 'none' && method !== 'GET' && method !== 'HEAD') {
      payload = r.bodyKind === 'raw' ? r.raw : JSON.stringify(r.body);
      if (r.contentType !== '') headers['content-type'] = r.contentType;
    }
    return { method, url: `${path}${r.query}`, headers, ...(payload !== undefined && { payload }) };
  })
  // The event stream never ends; test/service/events.test.ts covers it.
  .filter((r) => !/^\/api\/events\/?(\?|#|$)/i.test(r.url));
