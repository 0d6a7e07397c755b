// The HTTP lease client against a listening service on PostgreSQL: hold() renews over HTTP, and
// when the service goes away its signal fires at the trust deadline, while the database still
// holds the lease (checked by ordering, not by a wall-clock bound).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LeaseClient } from '../../src/client/lease-client.js';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EventQueue } from '../support/events.js';
import { LIVENESS_MS, within } from '../support/wait.js';

after(closeTestDatabase);

describe('lease client', () => {
  it('acquires, renews, lists and releases over HTTP with the same answers as the library', () =>
    withSchema('client basic', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({ lh, port: 0 });
      try {
        const client = new LeaseClient({ baseUrl: server.url });
        const lease = await client.acquire('r', { holder: 'a', ttl: '5s' });
        assert.equal(lease?.token, 1);
        assert.equal(await client.acquire('r', { holder: 'b', ttl: '5s' }), null);
        const renewed = await client.renew(lease!, { ttl: '10s' });
        assert.equal(renewed?.ttlMs, 10_000);
        assert.equal(await client.renew({ ...lease!, token: 7 }), null, 'a stale token is refused');
        assert.deepEqual(
          (await client.list('active')).map((l) => l.resource),
          ['r'],
        );
        assert.equal(await client.release(lease!), true);
        assert.equal(await client.release(lease!), false);
        assert.equal((await client.getById(lease!.id))?.state, 'released');
      } finally {
        await server.close();
      }
    }));

  it('hold() renews in the background, and fires its signal at the trust deadline once the service is gone, while the database still holds the lease', () =>
    withSchema('client hold', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({ lh, port: 0 });
      const client = new LeaseClient({ baseUrl: server.url, timeoutMs: 2_000 });
      const renewals = new EventQueue<number>();
      // The margin is the time between the trust deadline and the earliest moment the database
      // could give the lease to someone else: the bound the signal must meet. 1.5 s of it leaves
      // a loaded machine room; the HTTP timeout (2 s) is longer, so a signal that waited for a
      // hung request instead of its deadline would miss it.
      const marginMs = 1_500;
      const held = await client.hold('r', {
        holder: 'a',
        ttl: 3_000,
        margin: marginMs,
        renewEvery: 300,
        onRenewed: (lease) => renewals.push(lease.renewCount),
      });
      assert.equal(await renewals.next(LIVENESS_MS, 'a renewal over HTTP'), 1);
      assert.equal(await renewals.next(LIVENESS_MS, 'a second renewal'), 2);
      assert.equal(held.isTrusted(), true);

      // At the moment the signal fires, ask the database for the lease on another holder's
      // behalf: it must still be held, so no one else could have had it while "a" trusted it.
      const fired = new Promise<{ at: number; intruder: Promise<boolean> }>((resolve) =>
        held.signal.addEventListener(
          'abort',
          () =>
            resolve({
              at: performance.now(),
              intruder: lh.engine
                .leaseAcquire({ resource: 'r', holder: 'intruder', ttlMs: 1_000 })
                .then((result) => result.acquired),
            }),
          { once: true },
        ),
      );
      // The listener is in place before the service closes: under load the close itself can
      // outlast the trust deadline, and an abort that fired before it would never be seen.
      await server.close();
      const { at, intruder } = await within(fired, 30_000, 'the signal at the trust deadline');
      assert.equal(held.state, 'lost');
      assert.equal((held.signal.reason as { code?: string }).code, 'lease_lost');
      assert.equal(await intruder, false, 'the database still held the lease when trust ended');
      // The signal fired at the deadline, well before the margin ran out (a timer, not a wait
      // for an answer that will never come).
      assert.ok(
        at - held.trustedUntil < marginMs,
        `signal fired ${Math.round(at - held.trustedUntil)} ms after the trust deadline, beyond the ${marginMs} ms margin`,
      );
      // The trust deadline falls before the expiry the database holds.
      const stored = await lh.leases.get('r');
      const deadlineWall = Date.now() - (performance.now() - held.trustedUntil);
      assert.ok(stored!.expiresAt.getTime() > deadlineWall, 'trust ends before database expiry');
      assert.equal(stored!.holder, 'a');
    }));
});
