// The HTTP lease client against a listening service on PostgreSQL: hold() renews over HTTP, and
// when the service goes away its signal fires at the trust deadline, not later.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LeaseClient } from '../../src/client/lease-client.js';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EventQueue } from '../support/events.js';

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

  it('hold() renews in the background, and fires its signal at the trust deadline once the service is gone', () =>
    withSchema('client hold', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({ lh, port: 0 });
      const client = new LeaseClient({ baseUrl: server.url, timeoutMs: 2_000 });
      const renewals = new EventQueue<number>();
      const held = await client.hold('r', {
        holder: 'a',
        ttl: 1_500,
        renewEvery: 300,
        onRenewed: (lease) => renewals.push(lease.renewCount),
      });
      assert.equal(await renewals.next(3_000, 'a renewal over HTTP'), 1);
      assert.equal(await renewals.next(3_000, 'a second renewal'), 2);
      assert.equal(held.isTrusted(), true);

      await server.close();
      const aborted = new Promise<number>((resolve) =>
        held.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
      );
      const firedAt = await aborted;
      assert.equal(held.state, 'lost');
      assert.equal((held.signal.reason as { code?: string }).code, 'lease_lost');
      // A timer fires the abort at the deadline itself; allow only event-loop lateness.
      assert.ok(
        firedAt - held.trustedUntil < 250,
        `signal fired ${Math.round(firedAt - held.trustedUntil)} ms after the trust deadline`,
      );
      // The trust deadline falls before the expiry the database holds.
      const stored = await lh.leases.get('r');
      const deadlineWall = Date.now() - (performance.now() - held.trustedUntil);
      assert.ok(stored!.expiresAt.getTime() > deadlineWall, 'trust ends before database expiry');
    }));
});
