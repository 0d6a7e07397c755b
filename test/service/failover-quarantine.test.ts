/**
 * The HTTP service during a failover quarantine (decision 0225): a new term is refused with 503
 * `unavailable`, `details.reason: 'failover_quarantine'`, and a Retry-After that says when the
 * quarantine ends (not the outage default of 1 s); the live holder's renewal goes on. The new
 * server history is stood in for by rewriting the recorded timeline, as in
 * test/integration/epoch-tokens.test.ts.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp } from '../../src/service/app.js';
import { withSchema } from '../support/database.js';

it('refuses a new term with Retry-After until the quarantine ends, and lets the holder renew', () =>
  withSchema('service failover quarantine', async (ctx) => {
    const lh = await Leasehold.connect({
      connectionString: ctx.url,
      schema: ctx.schema,
      migrate: true,
    });
    const app = await buildApp({ lh });
    try {
      const held = await app.inject({
        method: 'POST',
        url: '/api/leases',
        payload: { resource: 'held', holder: 'a', ttlSeconds: 20 },
      });
      assert.equal(held.statusCode, 201);
      const admin = new pg.Client(ctx.url);
      await admin.connect();
      await admin.query(`UPDATE "${ctx.schema}".epochs SET timeline = timeline + 1000`);
      await admin.end();

      const refused = await app.inject({
        method: 'POST',
        url: '/api/leases',
        payload: { resource: 'other', holder: 'b', ttlSeconds: 20 },
      });
      assert.equal(refused.statusCode, 503);
      const error = refused.json().error;
      assert.equal(error.code, 'unavailable');
      assert.equal(error.details?.reason, 'failover_quarantine');
      // The quarantine is the longest ttl in force, 20 s here: Retry-After says so, in seconds.
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(retryAfter > 10 && retryAfter <= 20, `Retry-After ${retryAfter}`);

      const renewed = await app.inject({
        method: 'PUT',
        url: '/api/leases/renew',
        payload: { resource: 'held', holder: 'a', token: held.json().token, ttlSeconds: 20 },
      });
      assert.equal(renewed.statusCode, 200, renewed.body);
    } finally {
      await app.close();
      await lh.close();
    }
  }));
