// Flow control over HTTP (issue 26, decision 0242) through inject(): GET /api/queues, pause and
// resume (write), settings (admin), and GET /api/jobs/:id/explain, each with its scope, its
// refusals, and bad input answered 400 with the field named and nothing changed. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase } from '../support/database.js';
import { SCOPED_API_KEYS, SCOPED_KEYS, bearer, call, withApp } from '../support/service.js';

after(closeTestDatabase);

const KEYS = SCOPED_KEYS;
const API_KEYS = SCOPED_API_KEYS;
const reader = bearer(KEYS.read);
const writer = bearer(KEYS.write);
const admin = bearer(KEYS.admin);

interface QueueJson {
  queue: string;
  paused: boolean;
  concurrency: number | null;
  perKeyConcurrency: number | null;
  rate: { limit: number; per: number } | null;
  fairness: string;
  counts?: Record<string, number>;
}

const claim = (lh: Leasehold, queue: string, limit = 10) =>
  lh.engine.jobClaimBatch({ queues: [queue], workerId: 'w1', limit, leaseTtlMs: 30_000 });

const DEFAULTS = {
  paused: false,
  concurrency: null,
  perKeyConcurrency: 1,
  rate: null,
  fairness: 'oldest',
};

describe('queue routes', () => {
  it('lists every queue with jobs or settings: counts by status and flow control, by name', () =>
    withApp(
      'queues list',
      async (app, lh) => {
        assert.deepEqual((await call(app, 'GET', '/api/queues', undefined, reader)).body, {
          queues: [],
        });
        await lh.queue('reports').enqueue({ n: 1 });
        await lh.queue('emails').enqueue({ n: 1 });
        await lh.queue('emails').enqueue({ n: 2 });
        await claim(lh, 'emails', 1);
        await lh
          .queue('configured-only')
          .configure({ concurrency: 3, rate: { limit: 5, per: '1s' } });

        const answer = await call(app, 'GET', '/api/queues', undefined, reader);
        assert.equal(answer.status, 200, answer.text);
        const zero = { waiting: 0, pending: 0, processing: 0, completed: 0, dead: 0, cancelled: 0 };
        assert.deepEqual(answer.body.queues, [
          {
            queue: 'configured-only',
            ...DEFAULTS,
            concurrency: 3,
            rate: { limit: 5, per: 1000 },
            counts: zero,
          },
          { queue: 'emails', ...DEFAULTS, counts: { ...zero, pending: 1, processing: 1 } },
          { queue: 'reports', ...DEFAULTS, counts: { ...zero, pending: 1 } },
        ]);
        const anonymous = await call(app, 'GET', '/api/queues');
        assert.equal(anonymous.status, 401);
        assert.equal(anonymous.body.error?.code, 'unauthorized');
      },
      { apiKeys: API_KEYS },
    ));

  it('pause (write) stops claims of the queue only; resume lets them through again', () =>
    withApp(
      'queues pause',
      async (app, lh) => {
        await lh.queue('emails').enqueue({ n: 1 });
        await lh.queue('emails').enqueue({ n: 2 });
        await lh.queue('other').enqueue({ n: 3 });

        const refused = await call(app, 'POST', '/api/queues/emails/pause', undefined, reader);
        assert.equal(refused.status, 403, 'a read key cannot pause');
        assert.equal(refused.body.error?.code, 'forbidden');
        assert.equal((await lh.queue('emails').settings()).paused, false);

        const paused = await call(app, 'POST', '/api/queues/emails/pause', undefined, writer);
        assert.equal(paused.status, 200, paused.text);
        assert.deepEqual(paused.body, { queue: 'emails', ...DEFAULTS, paused: true });
        assert.equal(
          (await call(app, 'POST', '/api/queues/emails/pause', undefined, writer)).status,
          200,
          'pausing a paused queue changes nothing',
        );
        assert.deepEqual(await claim(lh, 'emails'), [], 'a paused queue gives no job');
        assert.equal((await claim(lh, 'other')).length, 1, 'other queues run on');

        const [job] = await lh.engine.jobList({ queue: 'emails', limit: 1, offset: 0 });
        const why = await call(app, 'GET', `/api/jobs/${job!.id}/explain`, undefined, reader);
        assert.deepEqual(why.body, { reason: 'paused' });

        const listed = await call(app, 'GET', '/api/queues', undefined, reader);
        const emails = (listed.body.queues as QueueJson[]).find((q) => q.queue === 'emails');
        assert.equal(emails?.paused, true);

        const resumed = await call(app, 'POST', '/api/queues/emails/resume', undefined, writer);
        assert.equal(resumed.status, 200, resumed.text);
        assert.deepEqual(resumed.body, { queue: 'emails', ...DEFAULTS });
        assert.equal((await claim(lh, 'emails')).length, 2, 'resumed: both jobs are claimed');
        const listedAfter = await call(app, 'GET', '/api/queues', undefined, reader);
        assert.equal(
          (listedAfter.body.queues as QueueJson[]).find((q) => q.queue === 'emails')?.paused,
          false,
        );
      },
      { apiKeys: API_KEYS },
    ));

  it('settings (admin) change what is given, null removes a limit, and answer the settings in force', () =>
    withApp(
      'queues settings',
      async (app, lh) => {
        const url = '/api/queues/emails/settings';
        const body = { concurrency: 2, perKeyConcurrency: 3, rate: { limit: 100, per: '1s' } };
        for (const headers of [reader, writer]) {
          const refused = await call(app, 'PUT', url, body, headers);
          assert.equal(refused.status, 403, 'settings need admin');
          assert.equal(refused.body.error?.code, 'forbidden');
        }
        assert.equal((await lh.queue('emails').settings()).concurrency, null, 'nothing changed');

        const set = await call(app, 'PUT', url, body, admin);
        assert.equal(set.status, 200, set.text);
        assert.deepEqual(set.body, {
          queue: 'emails',
          ...DEFAULTS,
          concurrency: 2,
          perKeyConcurrency: 3,
          rate: { limit: 100, per: 1000 },
        });
        const partial = await call(
          app,
          'PUT',
          url,
          { concurrency: null, rate: { limit: 5, per: 60_000 } },
          admin,
        );
        assert.equal(partial.status, 200, partial.text);
        assert.deepEqual(partial.body, {
          queue: 'emails',
          ...DEFAULTS,
          perKeyConcurrency: 3,
          rate: { limit: 5, per: 60_000 },
        });
        assert.deepEqual(await lh.queue('emails').settings(), partial.body);

        // Two jobs with the cap at 1: one is claimed, the other waits for it.
        await call(app, 'PUT', url, { concurrency: 1, rate: null }, admin);
        const a = await lh.queue('emails').enqueue({ n: 1 });
        const b = await lh.queue('emails').enqueue({ n: 2 });
        assert.deepEqual(
          (await claim(lh, 'emails')).map((j) => j.id),
          [a.id],
        );
        const why = await call(app, 'GET', `/api/jobs/${b.id}/explain`, undefined, reader);
        assert.equal(why.status, 200, why.text);
        assert.deepEqual(why.body, { reason: 'concurrency', inFlight: 1, limit: 1 });
      },
      { apiKeys: API_KEYS },
    ));

  it('refuses bad settings with 400 invalid_argument naming the field, and changes nothing', () =>
    withApp(
      'queues bad settings',
      async (app, lh) => {
        await lh.queue('emails').configure({ concurrency: 4 });
        const before = await lh.queue('emails').settings();
        const cases: [unknown, RegExp][] = [
          [{ concurrency: 0 }, /concurrency/],
          [{ concurrency: 1.5 }, /concurrency/],
          [{ concurrency: '3' }, /concurrency/],
          [{ concurrency: 10_001 }, /concurrency/],
          [{ perKeyConcurrency: -1 }, /perKeyConcurrency/],
          [{ rate: { limit: 0, per: 1000 } }, /rate\.limit/],
          [{ rate: { limit: 5 } }, /rate\.per/],
          [{ rate: { limit: 5, per: 'soon' } }, /rate\.per/],
          [{ rate: { limit: 5, per: 1 } }, /rate\.per/],
          [{ rate: { limit: 5, per: '1ms' } }, /rate\.per/],
          [{ rate: 100 }, /rate/],
          [{ fairness: 'newest' }, /fairness/],
          [{ paused: true }, /paused/],
          [{ burst: 3 }, /burst/],
          [[], /body/],
        ];
        for (const [body, field] of cases) {
          const answer = await call(app, 'PUT', '/api/queues/emails/settings', body, admin);
          assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${answer.text}`);
          assert.equal(answer.body.error?.code, 'invalid_argument', JSON.stringify(body));
          assert.match(answer.body.error?.message ?? '', field, JSON.stringify(body));
        }
        const mode = await call(
          app,
          'PUT',
          '/api/queues/emails/settings',
          { fairness: 'random' },
          admin,
        );
        assert.equal(mode.status, 400, mode.text);
        assert.equal(mode.body.error?.code, 'invalid_argument');
        assert.match(mode.body.error?.message ?? '', /fairness/);
        const badName = await call(app, 'POST', '/api/queues/%07bell/pause', undefined, writer);
        assert.equal(badName.status, 400, badName.text);
        assert.equal(badName.body.error?.code, 'invalid_argument');
        assert.deepEqual(await lh.queue('emails').settings(), before, 'nothing changed');
        assert.deepEqual(await lh.engine.queueSettingsList(), [before]);
      },
      { apiKeys: API_KEYS },
    ));

  it('explains a job of any queue (dates as ISO strings); 404 unknown, 400 malformed', () =>
    withApp('queues explain', async (app, lh) => {
      const later = new Date(Date.now() + 3_600_000);
      const scheduled = await lh.queue('emails').enqueue({ n: 1 }, { runAt: later });
      const why = await call(app, 'GET', `/api/jobs/${scheduled.id}/explain`);
      assert.equal(why.status, 200, why.text);
      assert.equal(why.body.reason, 'scheduled');
      assert.equal(new Date(String(why.body.until)).getTime(), scheduled.availableAt.getTime());
      assert.equal(why.body.until, scheduled.availableAt.toISOString());

      await lh.jobs.cancel(scheduled.id);
      const cancelled = await call(app, 'GET', `/api/jobs/${scheduled.id}/explain`);
      assert.deepEqual(cancelled.body, { reason: 'not-pending', status: 'cancelled' });

      const unknown = await call(app, 'GET', '/api/jobs/424242/explain');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error?.code, 'not_found');
      for (const id of ['abc', '1.5', '-1', '0']) {
        const bad = await call(app, 'GET', `/api/jobs/${id}/explain`);
        assert.equal(bad.status, 400, id);
        assert.equal(bad.body.error?.code, 'invalid_argument', id);
      }
    }));
});
