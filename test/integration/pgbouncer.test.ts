// leasehold behind a real pgbouncer in transaction-pooling mode (`poolMode: 'transaction'`):
// migrations, leases, the queue (polling), elections, schedules and maintenance work; advisory
// and session locks refuse with `unsupported`; every pooled server connection stays clean.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isLeaseholdError } from '../../src/core/errors.js';
import type { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import type { Lease } from '../../src/core/types.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, testDatabaseUrl, withSchema } from '../support/database.js';
import { pgbouncerAvailable, startPgbouncer, type Bouncer } from '../support/pgbouncer.js';
import { EventQueue } from '../support/events.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const available = pgbouncerAvailable();
const skip =
  !available && process.env.CI !== 'true'
    ? 'pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)'
    : false;
if (skip) console.log(`# skipping the pgbouncer tests: ${skip}`);

describe('behind pgbouncer in transaction-pooling mode', { skip }, () => {
  let bouncer: Bouncer;
  before(async () => {
    bouncer = await startPgbouncer(await testDatabaseUrl(), 4);
  });
  after(() => bouncer?.stop());

  const connect = (schema: string): Promise<Leasehold> =>
    Leasehold.connect({
      connectionString: bouncer.url,
      schema,
      poolMode: 'transaction',
      poolSize: 4,
    });

  it('migrates concurrently, and runs leases, the queue, elections, schedules and maintenance', () =>
    withSchema('pgbouncer features', async ({ schema }) => {
      const fleet = await Promise.all([connect(schema), connect(schema), connect(schema)]);
      const [a, b, c] = fleet as [Leasehold, Leasehold, Leasehold];
      try {
        const reports = await Promise.all(fleet.map((lh) => lh.migrate()));
        assert.deepEqual(
          reports.flatMap((r) => r.applied).sort((x, y) => x - y),
          [...new Set(reports.flatMap((r) => r.applied))].sort((x, y) => x - y),
          'each migration applied once',
        );

        // Leases: the whole cycle, and a held lease that renews through the pooler.
        const lease = await a.leases.acquire('report', { holder: 'a', ttl: 600 });
        assert.ok(lease);
        assert.equal(await b.leases.acquire('report', { holder: 'b', ttl: 600 }), null);
        assert.ok(await a.leases.release(lease));
        // Held past two ttls by renewals alone, judged by the database's own timestamps, not by
        // a sleep: a ttl of 3 s renewed every 250 ms leaves seconds of slack for a loaded
        // machine, and a lost lease fails the wait at once instead of at a timeout.
        const renewals = new EventQueue<Lease>();
        const held = await b.leases.hold('report', {
          holder: 'b',
          ttl: 3_000,
          renewEvery: 250,
          onRenewed: renewals.push,
        });
        const lost = new Promise<never>((_, reject) =>
          held.signal.addEventListener(
            'abort',
            () => reject(new Error(`the held lease was lost: ${String(held.signal.reason)}`)),
            { once: true },
          ),
        );
        lost.catch(() => undefined); // release() below aborts the signal too, by then unawaited
        const pastTwoTtls = held.lease.acquiredAt.getTime() + 2 * held.lease.ttlMs;
        let renewed = held.lease;
        while (renewed.renewedAt === null || renewed.renewedAt.getTime() <= pastTwoTtls)
          renewed = await Promise.race([
            renewals.next(15_000, 'a renewal through pgbouncer'),
            lost,
          ]);
        assert.equal(renewed.token, held.lease.token, 'renewals keep the term and its token');
        assert.ok(renewed.renewCount >= 2, `renewed ${renewed.renewCount} times`);
        assert.equal(held.signal.aborted, false, 'renewed through pgbouncer past two ttls');
        await held.release();

        // Queue: polling workers (no LISTEN here) complete every job; a rolled-back
        // transactional enqueue leaves nothing.
        const queued = await a
          .queue('work')
          .enqueueMany(Array.from({ length: 40 }, (_, i) => ({ payload: i })));
        const worker = b.worker({ queues: 'work', pollInterval: 100, handler: async () => 'ok' });
        await worker.start();
        await waitFor(
          'every job completed',
          async () =>
            (await a.engine.jobList({ queue: 'work', status: 'completed', limit: 100, offset: 0 }))
              .length === queued.length,
          { timeoutMs: 20_000 },
        );
        await worker.drain({ timeout: 1_000 });
        const client = await (a.engine as PostgresEngine).pool.connect();
        try {
          await client.query('BEGIN');
          await a.queue('tx').enqueue({}, { tx: client });
          await client.query('ROLLBACK');
        } finally {
          client.release();
        }
        assert.equal((await a.engine.jobList({ queue: 'tx', limit: 10, offset: 0 })).length, 0);

        // Elections: one leader; closing it hands over to the other.
        const electOptions = { ttl: 1_500, renewEvery: 400, pollEvery: 300 };
        const ea = a.elect('singleton', { ...electOptions, instanceId: 'a' });
        const eb = b.elect('singleton', { ...electOptions, instanceId: 'b' });
        await ea.start();
        await eb.start();
        await waitFor('one leader', () => ea.isLeader() !== eb.isLeader());
        const [leader, follower] = ea.isLeader() ? [ea, eb] : [eb, ea];
        await leader.close();
        await waitFor('the other to lead', () => follower.isLeader());
        await follower.close();

        // Schedules: two instances in lock mode run every slot once.
        const runs: string[] = [];
        const every = { every: 1_000, mode: 'lock' as const };
        const sa = a.schedule('tick', { ...every, instanceId: 'a' }, async ({ slot }) => {
          runs.push(slot.toISOString());
        });
        const sb = c.schedule('tick', { ...every, instanceId: 'c' }, async ({ slot }) => {
          runs.push(slot.toISOString());
        });
        await new Promise((resolve) => setTimeout(resolve, 3_500));
        await sa.close();
        await sb.close();
        assert.ok(runs.length >= 2, `${runs.length} slots ran`);
        assert.equal(new Set(runs).size, runs.length, 'no slot ran twice');

        // Maintenance takes its cycle lock as a lease lock here.
        const cycle = await c.maintainer().runOnce();
        assert.equal(cycle.ran, true);
      } finally {
        await Promise.all(fleet.map((lh) => lh.close()));
      }
    }));

  it('refuses advisory and session locks with unsupported, naming the pool mode', () =>
    withSchema('pgbouncer refusals', async ({ schema }) => {
      const lh = await connect(schema);
      try {
        await lh.migrate();
        const refused = (e: unknown): boolean =>
          isLeaseholdError(e, 'unsupported') && /transaction/.test(e.message);
        await assert.rejects(lh.engine.advisoryTryLock({ name: 'x' }), refused);
        await assert.rejects(lh.engine.sessionLockTryAcquire({ name: 'x' }), refused);
        assert.throws(
          () => lh.locks.advisory('x'),
          (e: unknown) => isLeaseholdError(e, 'unsupported'),
        );
        assert.equal(lh.engine.capabilities.notifications, false);
      } finally {
        await lh.close();
      }
    }));
});
