// Operations over many jobs over HTTP (issue 27 part 5, decision 0250) through inject():
// POST /api/queues/:name/jobs/retry and /cancel (write), DELETE /api/queues/:name/jobs (admin,
// filter in the query string), each answering { changed }; bad input is a 400 naming the field
// and changes nothing. The filter's semantics are the conformance suite's; this checks the
// routes carry it. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase } from '../support/database.js';
import { SCOPED_API_KEYS, SCOPED_KEYS, bearer, call, withApp } from '../support/service.js';

after(closeTestDatabase);

const reader = bearer(SCOPED_KEYS.read);
const writer = bearer(SCOPED_KEYS.write);
const admin = bearer(SCOPED_KEYS.admin);

const statuses = async (lh: Leasehold, queue: string): Promise<string[]> =>
  (await lh.jobs.list({ queue })).map((j) => j.status).sort();

describe('queue job routes', () => {
  it('cancel, retry (write) and delete (admin) every matching job of a queue, answering how many', () =>
    withApp(
      'queue jobs',
      async (app, lh) => {
        const emails = lh.queue('emails');
        await emails.enqueueMany([
          { payload: 1, options: { type: 'welcome' } },
          { payload: 2, options: { type: 'welcome' } },
          { payload: 3, options: { type: 'receipt' } },
        ]);
        await lh.queue('other').enqueue({ n: 1 });

        const cancelled = await call(
          app,
          'POST',
          '/api/queues/emails/jobs/cancel',
          { type: 'welcome', batchSize: 1 },
          writer,
        );
        assert.equal(cancelled.status, 200, cancelled.text);
        assert.deepEqual(cancelled.body, { changed: 2 });
        assert.deepEqual(await statuses(lh, 'emails'), ['cancelled', 'cancelled', 'pending']);

        // A body is optional: no filter retries every job the operation applies to.
        const retried = await call(app, 'POST', '/api/queues/emails/jobs/retry', undefined, writer);
        assert.equal(retried.status, 200, retried.text);
        assert.deepEqual(retried.body, { changed: 2 });
        const again = await call(
          app,
          'POST',
          '/api/queues/emails/jobs/retry',
          { status: ['dead', 'cancelled'] },
          writer,
        );
        assert.deepEqual(again.body, { changed: 0 });

        await call(app, 'POST', '/api/queues/emails/jobs/cancel', {}, writer);
        const forbidden = await call(app, 'DELETE', '/api/queues/emails/jobs', undefined, writer);
        assert.equal(forbidden.status, 403, 'delete needs admin');
        assert.equal(
          (await call(app, 'POST', '/api/queues/emails/jobs/retry', {}, reader)).status,
          403,
        );
        assert.deepEqual(await statuses(lh, 'emails'), ['cancelled', 'cancelled', 'cancelled']);

        const since = encodeURIComponent(new Date(Date.now() - 60_000).toISOString());
        const deleted = await call(
          app,
          'DELETE',
          `/api/queues/emails/jobs?status=dead,cancelled&createdSince=${since}&batchSize=2`,
          undefined,
          admin,
        );
        assert.equal(deleted.status, 200, deleted.text);
        assert.deepEqual(deleted.body, { changed: 3 });
        assert.deepEqual(await statuses(lh, 'emails'), []);
        assert.deepEqual(await statuses(lh, 'other'), ['pending'], 'other queues untouched');
      },
      { apiKeys: SCOPED_API_KEYS },
    ));

  it('refuses bad input with 400 invalid_argument naming the field, and changes nothing', () =>
    withApp(
      'queue jobs bad input',
      async (app, lh) => {
        await lh.queue('emails').enqueue({ n: 1 });
        const refusals: [string, string, unknown, RegExp][] = [
          ['POST', '/api/queues/emails/jobs/cancel', { color: 'red' }, /^body\.color: /],
          ['POST', '/api/queues/emails/jobs/retry', { status: 'pending' }, /^status: retry never/],
          ['POST', '/api/queues/emails/jobs/cancel', { status: 'gone' }, /^body\.status/],
          ['POST', '/api/queues/emails/jobs/cancel', { batchSize: 0 }, /^body\.batchSize/],
          ['POST', '/api/queues/emails/jobs/cancel', { createdSince: 'today' }, /^createdSince: /],
          ['DELETE', '/api/queues/emails/jobs?color=red', undefined, /^querystring\.color: /],
          ['DELETE', '/api/queues/emails/jobs?status=processing', undefined, /^status: delete/],
          ['DELETE', '/api/queues/emails/jobs?status=pending,gone', undefined, /^status: /],
        ];
        for (const [method, url, body, message] of refusals) {
          const answer = await call(app, method, url, body, admin);
          assert.equal(answer.status, 400, `${method} ${url}: ${answer.text}`);
          assert.equal(answer.body.error?.code, 'invalid_argument');
          assert.match(answer.body.error?.message ?? '', message, answer.text);
        }
        assert.deepEqual(await statuses(lh, 'emails'), ['pending'], 'nothing changed');
      },
      { apiKeys: SCOPED_API_KEYS },
    ));
});
