// SQL injection: payloads in every string field of every route, on PostgreSQL. Nothing answers
// 5xx, whatever is accepted comes back exactly as sent, and every table is still there with
// the rows the accepted requests made, and no others.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { closeTestDatabase } from '../support/database.js';
import { bearer, call, withApp, type Answer } from '../support/service.js';

after(closeTestDatabase);

export const INJECTION_PAYLOADS: readonly string[] = [
  "'; DROP TABLE leases; --",
  "'; DROP SCHEMA public CASCADE; --",
  "' OR '1'='1",
  "' OR 1=1 --",
  '" OR ""="',
  "admin'--",
  '$1',
  '$1::text',
  '$$; DROP TABLE jobs; $$',
  '\\',
  "\\'",
  "''",
  '\u0000',
  "a\u0000'; DROP TABLE leases; --",
  '\u2018 OR \u20181\u2019=\u20191', // ‘ OR ‘1’=’1 (curly quotes)
  '\uff07 OR 1=1', // fullwidth apostrophe
  '\u02bc; DROP TABLE jobs; --', // modifier letter apostrophe
  '1; SELECT pg_sleep(10); --',
  "'; COPY leases TO PROGRAM 'touch /tmp/pwned'; --",
  "E'\\x27'",
  '%',
  '_',
  '%_%',
  '/* */',
  'NULL',
  ');--',
  '\ud800',
  "'\u{1f4a5}'; --", // a character outside the BMP (a surrogate pair) must be accepted
];

const encode = (text: string): string => encodeURIComponent(text.replace(/\ud800/g, '\ufffd'));

/** Tallies what the service accepted, to check the tables against at the end. */
class Ledger {
  readonly resources = new Set<string>();
  readonly taskIds = new Set<number>();
  accepted = 0;
  refused = 0;

  check(answer: Answer, what: string): boolean {
    assert.ok(answer.status < 500, `no 5xx for ${what}: ${answer.status} ${answer.text}`);
    if (answer.status >= 400) {
      assert.equal(typeof answer.body.error?.code, 'string', `a stable code for ${what}`);
      this.refused++;
      return false;
    }
    this.accepted++;
    return true;
  }
}

async function leaseFields(app: FastifyInstance, p: string, i: number, ledger: Ledger) {
  const metadata = { [p]: p, nested: { value: p } };
  const asResource = await call(app, 'POST', '/api/leases', {
    resource: p,
    holder: 'h',
    metadata,
  });
  if (ledger.check(asResource, `resource ${JSON.stringify(p)}`)) {
    ledger.resources.add(p);
    assert.equal(asResource.body.resource, p, 'the resource round-trips verbatim');
    assert.deepEqual(asResource.body.metadata, metadata, 'the metadata round-trips verbatim');
    const id = asResource.body.id as number;
    const read = await call(app, 'GET', `/api/leases/${id}`);
    assert.equal(read.body.resource, p);
    assert.deepEqual(read.body.metadata, metadata);
    const listed = await call(app, 'GET', `/api/leases?prefix=${encode(p)}`);
    ledger.check(listed, `prefix ${JSON.stringify(p)}`);
    const resources = (listed.body.leases as { resource: string }[]).map((l) => l.resource);
    assert.ok(resources.includes(p), 'the prefix finds the lease');
    assert.ok(
      resources.every((r) => r.startsWith(p)),
      `prefix ${JSON.stringify(p)} is a prefix, not a pattern: ${JSON.stringify(resources)}`,
    );
  }
  const resource = `holder-test-${i}`;
  const asHolder = await call(app, 'POST', '/api/leases', { resource, holder: p });
  if (ledger.check(asHolder, `holder ${JSON.stringify(p)}`)) {
    ledger.resources.add(resource);
    assert.equal(asHolder.body.holder, p, 'the holder round-trips verbatim');
    const renewed = await call(app, 'PUT', '/api/leases/renew', { resource, holder: p });
    assert.equal(renewed.status, 200, 'the holder renews its lease');
    const released = await call(app, 'DELETE', '/api/leases/release', { resource, holder: p });
    assert.equal(released.status, 200, 'the holder releases its lease');
  }
  for (const [method, url, body] of [
    ['PUT', '/api/leases/renew', { resource: p, holder: p, token: 1 }],
    ['DELETE', '/api/leases/release', { resource: p, holder: p }],
    ['DELETE', `/api/leases/${encode(p)}`, { holder: p }],
    ['GET', `/api/leases/${encode(p)}`, undefined],
    ['GET', `/api/leases/active?prefix=${encode(p)}&limit=${encode(p)}`, undefined],
  ] as const) {
    ledger.check(await call(app, method, url, body), `${method} ${url}`);
  }
}

async function taskFields(app: FastifyInstance, p: string, i: number, ledger: Ledger) {
  const taskData = { [p]: p, list: [p] };
  const created = await call(app, 'POST', '/api/tasks', {
    task_data: taskData,
    key: p,
    partition_key: p,
  });
  if (ledger.check(created, `task with ${JSON.stringify(p)}`)) {
    ledger.taskIds.add(created.body.id as number);
    assert.deepEqual(created.body.task_data, taskData, 'task_data round-trips verbatim');
    const again = await call(app, 'POST', '/api/tasks', { task_data: {}, key: p });
    assert.equal(again.status, 200, 'the key finds the live task');
    assert.equal(again.body.id, created.body.id);
    const jobs = await call(app, 'GET', `/api/jobs?partitionKey=${encode(p)}`);
    assert.deepEqual(
      (jobs.body.jobs as { id: number }[]).map((j) => j.id),
      [created.body.id],
      'the partition key filter finds exactly that task',
    );
  }
  // A task of its own for the worker-name tests, so the claim below finds it.
  const plain = await call(app, 'POST', '/api/tasks', { task_data: { i } });
  assert.equal(plain.status, 201);
  ledger.taskIds.add(plain.body.id as number);
  const next = await call(app, 'POST', '/api/tasks/next', { processor: p });
  if (ledger.check(next, `processor ${JSON.stringify(p)}`) && next.status === 200) {
    const id = next.body.id as number;
    assert.equal(next.body.processor, p, 'the processor round-trips verbatim');
    const token = next.body.token as number;
    const beat = await call(app, 'PUT', `/api/tasks/${id}/heartbeat`, { processor: p, token });
    assert.equal(beat.status, 202);
    const failed = await call(app, 'PUT', `/api/tasks/${id}/fail`, {
      processor: p,
      token,
      error: p,
      retry_in_seconds: 0,
    });
    if (ledger.check(failed, `fail error ${JSON.stringify(p)}`)) {
      const read = await call(app, 'GET', `/api/tasks/${id}`);
      assert.equal(read.body.last_error, p, 'the error round-trips verbatim');
    }
  }
  for (const [method, url, body] of [
    ['PUT', '/api/tasks/1/complete', { processor: p, task_output: { [p]: p } }],
    ['PUT', '/api/tasks/1/hand-back', { processor: p }],
    ['PUT', '/api/tasks/1/release', { processor: p }],
    ['PUT', `/api/tasks/${encode(p)}/heartbeat`, { processor: p }],
    ['POST', `/api/tasks/${encode(p)}/cancel`, undefined],
    ['GET', `/api/jobs?queue=${encode(p)}&status=${encode(p)}`, undefined],
    ['GET', `/api/jobs/${encode(p)}`, undefined],
    ['DELETE', `/api/jobs/${encode(p)}`, undefined],
    ['GET', `/api/tasks?limit=${encode(p)}&offset=${encode(p)}`, undefined],
    ['GET', `/api/workers?limit=${encode(p)}`, undefined],
    ['GET', `/api/leaders?limit=${encode(p)}`, undefined],
  ] as const) {
    ledger.check(await call(app, method, url, body), `${method} ${url}`);
  }
}

async function tableCounts(url: string, schema: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
      [schema],
    );
    const counts: Record<string, number> = {};
    for (const { table_name: table } of rows) {
      const result = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}"."${table}"`,
      );
      counts[table] = result.rows[0]!.n;
    }
    return counts;
  } finally {
    await client.end();
  }
}

describe('SQL injection', () => {
  it('answers injection payloads in every lease and task field without a 5xx, round-trips what it accepts, and keeps every table and row', () =>
    withApp('http injection', async (app, _lh, schema) => {
      const before = await tableCounts(schema.url, schema.schema);
      const ledger = new Ledger();
      for (const [i, p] of INJECTION_PAYLOADS.entries()) {
        await leaseFields(app, p, i, ledger);
        await taskFields(app, p, i, ledger);
      }
      const afterCounts = await tableCounts(schema.url, schema.schema);
      assert.deepEqual(Object.keys(afterCounts), Object.keys(before), 'every table still exists');
      assert.equal(
        afterCounts.leases,
        ledger.resources.size,
        'one lease row per accepted resource',
      );
      assert.equal(afterCounts.jobs, ledger.taskIds.size, 'one job row per accepted task');
      assert.ok(ledger.accepted > INJECTION_PAYLOADS.length * 5, 'most payloads were accepted');
      console.log(
        `# injection: ${INJECTION_PAYLOADS.length} payloads, ${ledger.accepted} requests accepted, ${ledger.refused} refused with 4xx`,
      );
    }));

  it('answers injection payloads as API keys with 401 unauthorized', () =>
    withApp(
      'http injection keys',
      async (app) => {
        for (const p of INJECTION_PAYLOADS) {
          // Header values are Latin-1 without control characters: send the rest percent-encoded.
          const key = /^[\x20-\x7e]*$/.test(p) ? p : encode(p);
          for (const headers of [bearer(key), { 'x-api-key': key || 'x' }]) {
            const answer = await call(app, 'GET', '/api/leases', undefined, headers);
            assert.equal(answer.status, 401, `key ${JSON.stringify(key)}: ${answer.text}`);
            assert.equal(answer.body.error?.code, 'unauthorized');
          }
        }
      },
      { apiKeys: [{ name: 'ops', scope: 'admin', key: 'a-real-key-of-32-characters-0000' }] },
    ));
});
