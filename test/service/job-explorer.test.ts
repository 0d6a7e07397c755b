// The job explorer over HTTP (issue 30 part 2, decision 0266) through inject(): GET
// /api/jobs/search (read) with its filters, keyset pages and total; POST
// /api/jobs/selection/retry and /cancel (write) and /delete (admin), each id's outcome; bad input
// is a 400 invalid_argument naming the field and changes nothing. The search's semantics are the
// conformance suite's; this checks the routes carry them. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase } from '../support/database.js';
import { SCOPED_API_KEYS, SCOPED_KEYS, bearer, call, withApp } from '../support/service.js';

after(closeTestDatabase);

const reader = bearer(SCOPED_KEYS.read);
const writer = bearer(SCOPED_KEYS.write);
const admin = bearer(SCOPED_KEYS.admin);

interface SearchBody {
  jobs: { id: number; status: string }[];
  next: number | null;
  total: number;
  totalExact: boolean;
}

const statuses = async (lh: Leasehold, queue: string): Promise<string[]> =>
  (await lh.jobs.list({ queue })).map((j) => `${j.id}:${j.status}`);

describe('job explorer routes', () => {
  it('searches by filter one keyset page at a time, with the total', () =>
    withApp(
      'job search',
      async (app, lh) => {
        const emails = lh.queue('emails');
        const jobs = await emails.enqueueMany([
          { payload: { to: 'ada@example.com' }, options: { type: 'welcome' } },
          { payload: { to: 'bob@example.com' }, options: { type: 'welcome' } },
          { payload: { to: 'cy@example.com' }, options: { type: 'receipt' } },
        ]);
        await lh.queue('other').enqueue({ to: 'ada@example.com' });
        await lh.jobs.cancel(jobs[1]!.id);

        const first = await call(
          app,
          'GET',
          '/api/jobs/search?queue=emails&status=pending,cancelled&type=welcome&limit=1',
          undefined,
          reader,
        );
        assert.equal(first.status, 200, first.text);
        const page1 = first.body as unknown as SearchBody;
        assert.deepEqual(
          page1.jobs.map((j) => [j.id, j.status]),
          [[jobs[1]!.id, 'cancelled']],
        );
        assert.equal(page1.next, jobs[1]!.id);
        assert.ok(page1.total >= 1);
        const second = (
          await call(
            app,
            'GET',
            `/api/jobs/search?queue=emails&type=welcome&limit=1&cursor=${page1.next}`,
            undefined,
            reader,
          )
        ).body as unknown as SearchBody;
        assert.deepEqual(
          second.jobs.map((j) => j.id),
          [jobs[0]!.id],
        );
        const text = (
          await call(app, 'GET', '/api/jobs/search?text=ADA%40&order=oldest', undefined, reader)
        ).body as unknown as SearchBody;
        assert.equal(text.jobs.length, 2, 'both queues');
        assert.ok(text.jobs[0]!.id < text.jobs[1]!.id, 'oldest first');
        assert.deepEqual([text.total, text.totalExact, text.next], [2, true, null]);
      },
      { apiKeys: SCOPED_API_KEYS },
    ));

  it('retries, cancels (write) and deletes (admin) a selection, answering each id', () =>
    withApp(
      'job selection',
      async (app, lh) => {
        const [a, b] = await lh.queue('emails').enqueueMany([{ payload: 1 }, { payload: 2 }]);
        const cancelled = await call(
          app,
          'POST',
          '/api/jobs/selection/cancel',
          { ids: [a!.id, 999_999] },
          writer,
        );
        assert.equal(cancelled.status, 200, cancelled.text);
        assert.deepEqual(cancelled.body, {
          done: 1,
          results: [
            { id: a!.id, outcome: 'done', status: 'cancelled' },
            { id: 999_999, outcome: 'not_found' },
          ],
        });
        const retried = await call(
          app,
          'POST',
          '/api/jobs/selection/retry',
          { ids: [a!.id, b!.id] },
          writer,
        );
        assert.deepEqual(retried.body, {
          done: 1,
          results: [
            { id: a!.id, outcome: 'done', status: 'pending' },
            { id: b!.id, outcome: 'refused', status: 'pending' },
          ],
        });
        assert.equal(
          (await call(app, 'POST', '/api/jobs/selection/retry', { ids: [a!.id] }, reader)).status,
          403,
          'retry needs write',
        );
        const forbidden = await call(
          app,
          'POST',
          '/api/jobs/selection/delete',
          { ids: [a!.id] },
          writer,
        );
        assert.equal(forbidden.status, 403, 'delete needs admin, as DELETE /api/jobs/:id');
        const deleted = await call(
          app,
          'POST',
          '/api/jobs/selection/delete',
          { ids: [a!.id, b!.id] },
          admin,
        );
        assert.deepEqual((deleted.body as { done: number }).done, 2);
        assert.deepEqual(await statuses(lh, 'emails'), []);
      },
      { apiKeys: SCOPED_API_KEYS },
    ));

  it('refuses bad input with 400 invalid_argument naming the field, and changes nothing', () =>
    withApp(
      'job explorer bad input',
      async (app, lh) => {
        const job = await lh.queue('emails').enqueue({ n: 1 });
        await lh.jobs.cancel(job.id);
        const refusals: [string, string, unknown, RegExp][] = [
          ['GET', '/api/jobs/search?color=red', undefined, /^querystring\.color: /],
          ['GET', '/api/jobs/search?status=pending,gone', undefined, /^status: /],
          ['GET', '/api/jobs/search?order=sideways', undefined, /^querystring\.order/],
          ['GET', '/api/jobs/search?limit=0', undefined, /^querystring\.limit/],
          ['GET', '/api/jobs/search?text=', undefined, /^querystring\.text/],
          ['GET', '/api/jobs/search?createdSince=today', undefined, /^createdSince: /],
          [
            'GET',
            '/api/jobs/search?createdSince=2024-05-02&createdBefore=2024-05-01',
            undefined,
            /^createdBefore: /,
          ],
          ['POST', '/api/jobs/selection/retry', { ids: [] }, /^body\.ids/],
          ['POST', '/api/jobs/selection/retry', { ids: [job.id, 0] }, /^body\.ids/],
          ['POST', '/api/jobs/selection/retry', { ids: [job.id], all: true }, /^body\.all: /],
          ['POST', '/api/jobs/selection/retry', undefined, /^body/],
        ];
        for (const [method, url, body, message] of refusals) {
          const answer = await call(app, method, url, body, admin);
          assert.equal(answer.status, 400, `${method} ${url}: ${answer.text}`);
          assert.equal(answer.body.error?.code, 'invalid_argument');
          assert.match(answer.body.error?.message ?? '', message, answer.text);
        }
        assert.deepEqual(await statuses(lh, 'emails'), [`${job.id}:cancelled`], 'nothing changed');
      },
      { apiKeys: SCOPED_API_KEYS },
    ));
});
