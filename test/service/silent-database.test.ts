/**
 * The database goes silent mid-traffic: a proxy between the service and PostgreSQL stops
 * forwarding in both directions and keeps every socket open (a partition, a frozen host), which
 * is the outage a refused connection does not show. Every request must still be answered, 503
 * `unavailable` with Retry-After, within 2 s; nothing may hang; the process stays up (an uncaught
 * error would end this test process); and the service recovers by itself when the proxy heals.
 *
 * Times are measured on this test's clock; the 2 s bound is widened by the worst timer lateness
 * this process saw meanwhile, so a loaded machine does not fail it while a hang still does.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp } from '../../src/service/app.js';
import { DEFAULT_REPLY_TIMEOUT_MS } from '../../src/service/reply-deadline.js';
import { SERVICE_DATABASE_OPTIONS } from '../../src/service/server.js';
import { FaultProxy } from '../chaos/harness/fault-proxy.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { watchLoopLag, type LoopLag } from '../support/loop-lag.js';
import { upstreamOf, viaPort } from '../support/proxied-url.js';
import { within } from '../support/wait.js';

after(closeTestDatabase);

const ANSWER_BOUND_MS = 2_000;
const SILENCE_MS = 4_000;

interface Sent {
  route: string;
  startedAt: number;
  tookMs: number;
  status: number;
  code: string | undefined;
  retryAfter: unknown;
}

describe('silent database', () => {
  it('answers every request 503 unavailable within 2 s while silent, and recovers when healed', (t) =>
    withSchema('service silent database', async (schema) => {
      const { host, port } = upstreamOf(schema.url);
      const proxy = new FaultProxy(host, port);
      const servicePort = await proxy.portFor('service');
      const lh = await Leasehold.connect({
        connectionString: viaPort(schema.url, servicePort),
        schema: schema.schema,
        migrate: true,
        ...SERVICE_DATABASE_OPTIONS,
      });
      const app = await buildApp({ lh, replyTimeoutMs: DEFAULT_REPLY_TIMEOUT_MS });
      let lag: LoopLag | undefined;
      const sent: Sent[] = [];
      let phase: 'before' | 'silent' | 'healed' = 'before';
      let healedAt = Number.POSITIVE_INFINITY;
      try {
        const task = await app.inject({
          method: 'POST',
          url: '/api/tasks',
          payload: { task_data: { n: 0 } },
        });
        assert.equal(task.statusCode, 201);
        const taskId = task.json().id as number;

        const requests = (client: number, i: number) =>
          [
            ['POST', '/api/leases', { resource: `r${client}`, holder: `h${client}` }],
            ['PUT', '/api/leases/renew', { resource: `r${client}`, holder: `h${client}` }],
            ['GET', '/api/leases', undefined],
            ['POST', '/api/tasks', { task_data: { client, i } }],
            ['POST', '/api/tasks/next', { processor: `p${client}` }],
            ['PUT', `/api/tasks/${taskId}/heartbeat`, { processor: 'nobody' }],
            ['GET', '/api/tasks', undefined],
            ['GET', '/healthz', undefined],
          ] as const;

        // Six clients send requests one after another until each has seen the service answer
        // normally again after the heal.
        const client = async (n: number): Promise<void> => {
          for (let i = 0; ; i++) {
            const list = requests(n, i);
            const [method, url, payload] = list[(i + n) % list.length]!;
            const startedAt = performance.now();
            const answer = await app.inject({ method, url, ...(payload ? { payload } : {}) });
            const tookMs = performance.now() - startedAt;
            const body = answer.body ? (answer.json() as { error?: { code: string } }) : {};
            sent.push({
              route: `${method} ${url}`,
              startedAt,
              tookMs,
              status: answer.statusCode,
              code: body.error?.code,
              retryAfter: answer.headers['retry-after'],
            });
            if (startedAt > healedAt && answer.statusCode < 500) return;
            if (phase === 'before') await new Promise((r) => setTimeout(r, 20));
          }
        };
        const clients = Promise.all([0, 1, 2, 3, 4, 5].map(client));

        await new Promise((r) => setTimeout(r, 500));
        // Measured from here: start-up lateness says nothing about the silence.
        lag = watchLoopLag();
        const silentAt = performance.now();
        phase = 'silent';
        proxy.setMode('service', { kind: 'silent' });
        await new Promise((r) => setTimeout(r, SILENCE_MS));
        healedAt = performance.now();
        phase = 'healed';
        proxy.setMode('service', { kind: 'pass' });
        await within(clients, 60_000, 'every client seeing the service answer again');

        const slack = lag.maxMs;
        t.diagnostic(
          `${sent.length} requests; slowest ${Math.round(Math.max(...sent.map((s) => s.tookMs)))} ms; loop lag ${Math.round(slack)} ms`,
        );
        const slow = sent.filter((s) => s.tookMs > ANSWER_BOUND_MS + slack);
        assert.deepEqual(
          slow.map((s) => `${s.route} took ${Math.round(s.tookMs)} ms`),
          [],
          `every request answered within ${ANSWER_BOUND_MS} ms (+ ${Math.round(slack)} ms loop lag)`,
        );
        const silentAnswers = sent.filter(
          (s) => s.startedAt >= silentAt && s.startedAt + s.tookMs <= healedAt,
        );
        assert.ok(
          silentAnswers.length >= 6,
          `requests answered while silent: ${silentAnswers.length}`,
        );
        const failures = sent.filter((s) => s.status >= 500);
        assert.ok(failures.length > 0, 'the silence was felt');
        for (const s of failures) {
          assert.equal(s.status, 503, `${s.route}: 503`);
          assert.equal(s.code, 'unavailable', `${s.route}: code unavailable`);
          assert.equal(s.retryAfter, '1', `${s.route}: Retry-After`);
        }
        for (const s of silentAnswers) {
          assert.equal(s.status, 503, `${s.route} while silent answered ${s.status}`);
        }

        // Recovered by itself: the routes answer normally again.
        for (const url of ['/api/leases', '/api/tasks', '/healthz']) {
          const answer = await app.inject({ method: 'GET', url });
          assert.equal(answer.statusCode, 200, `GET ${url} after the heal`);
        }
      } finally {
        lag?.stop();
        proxy.setMode('service', { kind: 'pass' });
        await within(app.close(), 10_000, 'closing the app');
        await within(lh.close(), 10_000, 'closing the leasehold');
        await proxy.close();
      }
    }));
});
