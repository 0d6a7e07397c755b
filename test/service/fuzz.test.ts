// HTTP fuzzing: thousands of generated requests (test/service/fuzz-requests.ts) against the
// service on PostgreSQL through inject(), a smaller share over a real socket, and a phase with
// the database unreachable. Properties: never a 5xx (only 503 `unavailable` while the database
// is down), every error a JSON body with a stable code, no table changed by a refused request,
// and the process still answering at the end.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { ERROR_CODES } from '../../src/core/errors.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp } from '../../src/service/app.js';
import { closeTestDatabase } from '../support/database.js';
import { withApp } from '../support/service.js';
import { fuzzRequest, type FuzzRequest } from './fuzz-requests.js';
import { TableSnapshotter, type TableSnapshot } from './table-snapshot.js';

after(closeTestDatabase);

const INJECT_RUNS = 8_600;
const SOCKET_RUNS = 400;
const OUTAGE_RUNS = 1_000;
const STABLE_CODES = new Set(Object.keys(ERROR_CODES));

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** Checks one answer; `outage` allows 503 unavailable (and nothing else of 5xx). */
function checkAnswer(req: FuzzRequest, answer: Answer, outage: boolean): void {
  const what = `${req.method} ${req.url.slice(0, 120)} -> ${answer.status} ${answer.body.slice(0, 200)}`;
  if (answer.status >= 500) {
    assert.ok(outage && answer.status === 503, `no 5xx: ${what}`);
  }
  if (answer.status < 400 || req.method === 'HEAD') return;
  assert.match(answer.contentType, /^application\/json/, `errors are JSON: ${what}`);
  const body = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown } };
  assert.ok(
    typeof body.error?.code === 'string' && STABLE_CODES.has(body.error.code),
    `a stable code: ${what}`,
  );
  assert.equal(typeof body.error.message, 'string', `a message: ${what}`);
  if (answer.status === 503) assert.equal(body.error.code, 'unavailable', what);
  assert.doesNotMatch(answer.body, /\bat .+\.(ts|js):\d+|node_modules/, `no stack: ${what}`);
}

async function inject(app: FastifyInstance, req: FuzzRequest): Promise<Answer> {
  const res = await app.inject({
    method: req.method as 'GET',
    url: req.url,
    headers: req.headers,
    ...(req.payload !== undefined && { payload: req.payload }),
  });
  return {
    status: res.statusCode,
    contentType: String(res.headers['content-type'] ?? ''),
    body: res.body,
  };
}

/** One request over a real socket; the URL is sent as generated (no normalisation). */
function overSocket(port: number, req: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(req.payload);
  });
}

/** Bytes written straight to a socket, for what no HTTP client would send; the whole answer back. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

const MALFORMED_HTTP = [
  'GARBAGE\r\n\r\n',
  'GET / HTTP/9.9\r\n\r\n',
  'GET /api/leases HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  'POST /api/leases HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  `GET /api/leases HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
  'GET /api/leases HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
  'GET /\u0000 HTTP/1.1\r\n\r\n',
];

/** Node's client refuses some generated paths and headers before sending: those are skipped. */
function sendable(req: FuzzRequest): boolean {
  return (
    !/[^\x21-\x7e]/.test(req.url) &&
    Object.values(req.headers).every((v) => !/[^\t\x20-\x7e]/.test(v))
  );
}

/** A few leases and tasks, some claimed, so ids 1..6 exist and guarded routes reach the engine. */
async function seed(app: FastifyInstance): Promise<void> {
  for (let i = 1; i <= 3; i++) {
    const send = (method: 'POST' | 'PUT', url: string, payload: object): Promise<unknown> =>
      app.inject({ method, url, payload });
    await send('POST', '/api/leases', { resource: `r${i}`, holder: `h${i}`, ttlSeconds: 60 });
    await send('POST', '/api/tasks', { task_data: { n: i }, key: `k${i}` });
    await send('POST', '/api/tasks/next', { processor: `w${i}`, lease_seconds: 60 });
  }
}

/**
 * Runs `runs` generated requests through `send`, checking each answer, and comparing table
 * snapshots around every refused request: the baseline is retaken after each accepted one.
 */
async function fuzz(
  runs: number,
  seedValue: number,
  send: (req: FuzzRequest) => Promise<Answer>,
  snapshots: TableSnapshotter,
  filter: (req: FuzzRequest) => boolean = () => true,
): Promise<{ sent: number; byStatus: Map<number, number> }> {
  let baseline: TableSnapshot = await snapshots.take();
  const byStatus = new Map<number, number>();
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(fuzzRequest.filter(filter), async (req) => {
      const answer = await send(req);
      sent++;
      byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
      checkAnswer(req, answer, false);
      const now = await snapshots.take();
      if (answer.status >= 400)
        assert.deepEqual(now, baseline, `refused ${req.method} ${req.url} changed no table`);
      baseline = now;
    }),
    { numRuns: runs, seed: seedValue, endOnFailure: true },
  );
  return { sent, byStatus };
}

function summary(byStatus: Map<number, number>): string {
  return [...byStatus]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}:${n}`)
    .join(' ');
}

describe('HTTP fuzzing', () => {
  it('answers thousands of generated requests with no 5xx, JSON errors with stable codes, and no change from a refused request', () =>
    withApp('http fuzz', async (app, _lh, schema) => {
      const snapshots = new TableSnapshotter(schema.url, schema.schema);
      const started = performance.now();
      try {
        const empty = await snapshots.take();
        await seed(app);
        const seeded = await snapshots.take();
        assert.notDeepEqual(seeded, empty, 'the snapshot sees inserted rows');
        const renewed = await app.inject({
          method: 'PUT',
          url: '/api/leases/renew',
          payload: { resource: 'r1', holder: 'h1' },
        });
        assert.equal(renewed.statusCode, 200);
        assert.notDeepEqual(await snapshots.take(), seeded, 'and a row updated in place');
        const viaInject = await fuzz(INJECT_RUNS, 20_261_123, (req) => inject(app, req), snapshots);
        const address = await app.listen({ host: '127.0.0.1', port: 0 });
        const port = Number(new URL(address).port);
        const viaSocket = await fuzz(
          SOCKET_RUNS,
          7,
          (req) => overSocket(port, req),
          snapshots,
          sendable,
        );
        for (const bytes of MALFORMED_HTTP) {
          const answer = await rawExchange(port, bytes);
          const [head = '', body = ''] = answer.split('\r\n\r\n');
          const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
          assert.ok(status >= 400 && status < 500, `malformed HTTP answered 4xx: ${head}`);
          const code = (JSON.parse(body) as { error: { code: string } }).error.code;
          assert.ok(STABLE_CODES.has(code), `malformed HTTP answered with a stable code: ${body}`);
        }
        const healthy = await overSocket(port, { method: 'GET', url: '/healthz', headers: {} });
        assert.equal(healthy.status, 200, 'the service still answers after the fuzzing');
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        console.log(
          `# fuzz: ${viaInject.sent} requests through inject() (${summary(viaInject.byStatus)}), ` +
            `${viaSocket.sent} over a socket (${summary(viaSocket.byStatus)}), ` +
            `${MALFORMED_HTTP.length} malformed HTTP in ${seconds} s`,
        );
        assert.equal(viaInject.sent, INJECT_RUNS);
        assert.ok(
          [...viaInject.byStatus.keys()].some((s) => s < 300),
          'some generated requests were accepted, so the fuzzing reached the database',
        );
      } finally {
        await snapshots.close();
      }
    }));

  it('answers only 4xx or 503 unavailable, quickly, while the database is unreachable', async () => {
    // A port nothing listens on: every connection attempt is refused at once.
    const closedPort = await new Promise<number>((resolve) => {
      const probe = connect({ host: '127.0.0.1', port: 1 });
      probe.on('error', () => resolve(1));
      probe.on('connect', () => {
        probe.destroy();
        resolve(9);
      });
    });
    const engine = new PostgresEngine({
      connectionString: `postgres://leasehold@127.0.0.1:${closedPort}/leasehold`,
      schema: 'fuzz_outage',
      connectTimeoutMs: 500,
      poolSize: 2,
    });
    const app = await buildApp({ lh: Leasehold.fromEngine(engine) });
    const byStatus = new Map<number, number>();
    const started = performance.now();
    try {
      await fc.assert(
        fc.asyncProperty(fuzzRequest, async (req) => {
          const answer = await inject(app, req);
          byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
          checkAnswer(req, answer, true);
        }),
        { numRuns: OUTAGE_RUNS, seed: 42, endOnFailure: true },
      );
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(
        `# fuzz (database down): ${OUTAGE_RUNS} requests (${summary(byStatus)}) in ${seconds} s; ` +
          `with the first test, ${INJECT_RUNS + SOCKET_RUNS + MALFORMED_HTTP.length + OUTAGE_RUNS} requests in all`,
      );
      assert.ok((byStatus.get(503) ?? 0) > 0, 'requests that reach the engine answer 503');
    } finally {
      await app.close();
      await engine.close().catch(() => {});
    }
  });
});
