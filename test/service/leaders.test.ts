// GET /api/leaders and GET /api/schedules through inject(), on PostgreSQL: elections run with
// lh.elect and a schedule with lh.schedule, then read back as the dashboard reads them (the
// routes, and the snapshot the SSE stream sends).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Leasehold } from '../../src/leasehold.js';
import type { ScheduleEvents } from '../../src/schedules/schedule.js';
import { readSnapshot } from '../../src/service/snapshot.js';
import { closeTestDatabase } from '../support/database.js';
import { EventQueue } from '../support/events.js';
import { bearer, call, withApp } from '../support/service.js';
import { LIVENESS_MS } from '../support/wait.js';

after(closeTestDatabase);

interface LeaderBody {
  election: string;
  instanceId: string;
  token: number;
  electedAt: string;
  expiresAt: string;
  state: string;
}

interface ScheduleBody {
  name: string;
  lastSlot: string;
  holder: string;
  token: number | null;
  claimedAt: string;
  nextSlot: string | null;
  runs: number;
}

/** withApp, closing the facade too: its elections and schedules run timers until closed. */
const withLeasehold = (
  name: string,
  fn: (app: FastifyInstance, lh: Leasehold) => Promise<void>,
): Promise<void> =>
  withApp(name, async (app, lh) => {
    try {
      await fn(app, lh);
    } finally {
      await lh.close();
    }
  });

describe('leader and schedule routes', () => {
  it('lists who leads each election, since when and with which token, and a leader that stepped down as released', () =>
    withLeasehold('http leaders', async (app, lh) => {
      assert.deepEqual((await call(app, 'GET', '/api/leaders')).body, { leaders: [] });
      const importer = lh.elect('importer', { instanceId: 'web-1' });
      const billing = lh.elect('billing', { instanceId: 'web-2' });
      await Promise.all([importer.start(), billing.start()]);
      assert.ok(importer.isLeader() && billing.isLeader());
      // A lease lock that is not an election stays out of the list.
      assert.ok(
        (await lh.engine.leaseLockAcquire({ name: 'nightly', holder: 'cron', ttlMs: 30_000 }))
          .acquired,
      );

      const answer = await call(app, 'GET', '/api/leaders');
      assert.equal(answer.status, 200);
      const leaders = answer.body.leaders as LeaderBody[];
      assert.deepEqual(
        leaders.map((l) => [l.election, l.instanceId, l.token, l.state]),
        [
          ['billing', 'web-2', billing.token, 'active'],
          ['importer', 'web-1', importer.token, 'active'],
        ],
      );
      const info = await importer.leader();
      assert.equal(leaders[1]?.electedAt, info?.electedAt.toISOString());
      assert.ok(Date.parse(leaders[1]!.expiresAt) > Date.parse(leaders[1]!.electedAt));

      await billing.close();
      const closed = (await call(app, 'GET', '/api/leaders?limit=1')).body.leaders as LeaderBody[];
      assert.deepEqual(
        closed.map((l) => [l.election, l.state]),
        [['billing', 'released']],
        'limit keeps the first names; a closed election reads released',
      );
      assert.equal((await call(app, 'GET', '/api/leaders?limit=0')).status, 400);
    }));

  it('shows a leader-mode schedule with its last slot, holder, token, next slot and runs, also in the snapshot', () =>
    withLeasehold('http schedules', async (app, lh) => {
      assert.deepEqual((await call(app, 'GET', '/api/schedules')).body, { schedules: [] });
      const ran = new EventQueue<ScheduleEvents['schedule:slot']>();
      const schedule = lh.schedule(
        'queue-report',
        { every: '1s', mode: 'leader', instanceId: 'web-1' },
        () => {},
      );
      schedule.events.on('schedule:slot', (e) => {
        if (e.outcome === 'ran') ran.push(e);
      });
      const first = await ran.next(LIVENESS_MS, 'a slot run by the schedule');

      const answer = await call(app, 'GET', '/api/schedules');
      assert.equal(answer.status, 200);
      const [summary] = answer.body.schedules as ScheduleBody[];
      assert.equal((answer.body.schedules as ScheduleBody[]).length, 1);
      assert.equal(summary?.name, 'queue-report');
      assert.equal(summary.holder, 'web-1');
      assert.equal(summary.token, schedule.election?.token, "the leadership's token");
      assert.ok(summary.runs >= 1);
      assert.ok(Date.parse(summary.lastSlot) >= first.slot.getTime());
      assert.equal(
        Date.parse(summary.nextSlot!),
        Date.parse(summary.lastSlot) + 1_000,
        'the next slot, as the schedule computed it',
      );

      const leaders = (await call(app, 'GET', '/api/leaders')).body.leaders as LeaderBody[];
      assert.deepEqual(
        leaders.map((l) => [l.election, l.instanceId, l.state]),
        [['schedule:queue-report', 'web-1', 'active']],
        "the schedule's own election",
      );

      const snapshot = await readSnapshot(lh);
      assert.equal(snapshot.leaders[0]?.election, 'schedule:queue-report');
      assert.equal(snapshot.schedules[0]?.name, 'queue-report');
    }));

  it('needs the read scope and is documented in OpenAPI with its response schema', () =>
    withApp(
      'http leaders auth',
      async (app) => {
        for (const path of ['/api/leaders', '/api/schedules']) {
          assert.equal((await call(app, 'GET', path)).status, 401, `${path} without a key`);
          const read = await call(app, 'GET', path, undefined, bearer('reader-key-0123456789'));
          assert.equal(read.status, 200, `${path} with a read key`);
        }
        const doc = await call(app, 'GET', '/docs/json');
        type Operation = {
          responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
        };
        const paths = doc.body.paths as Record<string, Record<string, Operation>>;
        for (const [path, property] of [
          ['/api/leaders', 'leaders'],
          ['/api/schedules', 'schedules'],
        ] as const) {
          const ok = paths[path]?.get?.responses['200'];
          assert.ok(ok, `OpenAPI documents GET ${path}`);
          const schema = ok.content?.['application/json']?.schema as {
            properties: Record<string, unknown>;
          };
          assert.ok(schema.properties[property], `GET ${path} documents its body`);
        }
      },
      { apiKeys: [{ name: 'reader', key: 'reader-key-0123456789', scope: 'read' }] },
    ));
});
