// GET /api/trends (issue 30 part 5, decision 0265): the series of the last hour and day from the
// rows the maintainer records, one queue or all, and a bad window or queue refused with a 400
// naming the field. On PostgreSQL, with the real clock: the minute under way is the one read.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { closeTestDatabase } from '../support/database.js';
import { call, withApp } from '../support/service.js';

after(closeTestDatabase);

interface Point {
  at: string;
  completed: number;
  failed: number;
  dead: number;
  started: number;
  failureRate: number | null;
  pickupP50Ms: number | null;
  depth: { waiting: number; pending: number; processing: number } | null;
}

describe('trends route', () => {
  it('answers the hour a point a minute and the day a point per five minutes, from what the maintainer recorded', () =>
    withApp('trends route', async (app, lh) => {
      const queue = lh.queue('mail');
      for (let i = 0; i < 3; i++) await queue.enqueue({ i });
      await lh.queue('report').enqueue({});
      const worker = lh.worker({ queues: 'mail', handler: async () => 'sent', concurrency: 3 });
      await worker.runUntilEmpty();
      const cycle = await lh.maintainer().runOnce();
      assert.ok(cycle.trends >= 2, `rows recorded: ${cycle.trends}`);

      const hour = await call(app, 'GET', '/api/trends?window=1h');
      assert.equal(hour.status, 200, hour.text);
      assert.equal(hour.body.window, '1h');
      assert.equal(hour.body.queue, null);
      assert.equal(hour.body.stepMinutes, 1);
      const points = hour.body.points as Point[];
      assert.equal(points.length, 60);
      // The jobs may have completed on either side of a minute's turn: count them over the hour.
      assert.equal(
        points.reduce((n, p) => n + p.completed, 0),
        3,
      );
      // The depth is the maintainer's snapshot of its minute; when the minute turned between
      // its cycle and this read, that snapshot is the point before the last, and the newest
      // minute has none yet.
      const recorded = points.findLastIndex((p) => p.depth !== null);
      assert.ok(recorded >= points.length - 2, `newest depth at point ${recorded} of 60`);
      assert.deepEqual(points[recorded]!.depth, { waiting: 0, pending: 1, processing: 0 });
      if (recorded === points.length - 2) assert.equal(points.at(-1)!.depth, null);
      assert.ok(Date.parse(points.at(-1)!.at) <= Date.now());
      const latest = hour.body.latest as { queue: string }[];
      assert.deepEqual(
        latest.map((r) => r.queue),
        ['mail', 'report'],
      );

      const mail = await call(app, 'GET', '/api/trends?queue=mail');
      assert.equal(mail.status, 200);
      assert.equal(mail.body.window, '1h', 'the hour by default');
      assert.equal(mail.body.queue, 'mail');
      const mailPoints = mail.body.points as Point[];
      assert.equal(
        mailPoints.reduce((n, p) => n + p.started, 0),
        3,
      );
      assert.ok(mailPoints.some((p) => p.failureRate === 0 && p.pickupP50Ms !== null));

      const day = await call(app, 'GET', '/api/trends?window=1d');
      assert.equal(day.status, 200);
      assert.equal(day.body.stepMinutes, 5);
      assert.equal((day.body.points as Point[]).length, 288);
    }));

  it('refuses a window it does not know, a bad queue name and an unknown field, with a 400 naming the field', () =>
    withApp('trends refused', async (app) => {
      for (const [url, field] of [
        ['/api/trends?window=2h', 'querystring.window'],
        ['/api/trends?window=', 'querystring.window'],
        ['/api/trends?queue=', 'querystring.queue'],
        ['/api/trends?limit=5', 'querystring.limit'],
      ] as const) {
        const answer = await call(app, 'GET', url);
        assert.equal(answer.status, 400, `${url}: ${answer.text}`);
        assert.equal(answer.body.error?.code, 'invalid_argument');
        assert.match(answer.body.error!.message, new RegExp(`^${field.replace('.', '\\.')}`), url);
      }
    }));
});
