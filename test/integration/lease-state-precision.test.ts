/**
 * The `state` a read reports must agree with what the very next write decides. PostgreSQL keeps
 * microseconds and a JS Date does not, so the state is decided in SQL: computed in JS from two
 * millisecond Dates, a lease read in the last millisecond before its expiry was reported as
 * expired while its holder could still renew it.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { closeTestDatabase, withSchema } from '../support/database.js';

const ATTEMPTS = 100;

after(closeTestDatabase);

describe('the state of a lease read in real time', () => {
  it('never reports expired while its holder can still renew it', async (t) => {
    await withSchema('lease state precision', async (schema) => {
      const engine = await schema.engine({ poolSize: 1 });
      let polls = 0;
      for (let i = 0; i < ATTEMPTS; i++) {
        const resource = `r${i}`;
        const acquired = await engine.leaseAcquire({ resource, holder: 'h', ttlMs: 10 });
        assert.ok(acquired.acquired);
        // Read as fast as one connection allows until the lease reads as expired...
        for (;;) {
          polls++;
          const lease = await engine.leaseGet({ resource });
          if (lease?.state !== 'active') break;
        }
        // ...then a renew, which the database can only judge later still, must be refused.
        const renewed = await engine.leaseRenew({
          resource,
          holder: 'h',
          token: acquired.lease.token,
          ttlMs: 10,
        });
        assert.equal(renewed, null, `attempt ${i}: renewed a lease that read as expired`);
      }
      t.diagnostic(`${ATTEMPTS} leases read ${polls} times up to their expiry`);
    });
  });
});
