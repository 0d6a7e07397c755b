// Concurrent lease requests share statements (src/runtime/coalescer.ts) and keep every lease
// rule: one winner per resource, each caller its own answer. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Engine } from '../../src/engine/engine.js';
import { closeTestDatabase } from '../support/database.js';
import { call, withApp } from '../support/service.js';

after(closeTestDatabase);

/** Counts the engine's many-lease calls and the requests they carried. */
function countLists(engine: Engine): { lists: number; requests: number } {
  const seen = { lists: 0, requests: 0 };
  for (const name of ['leaseAcquireMany', 'leaseRenewMany', 'leaseReleaseMany'] as const) {
    const original = engine[name].bind(engine) as (ps: readonly unknown[]) => Promise<never>;
    (engine as unknown as Record<string, unknown>)[name] = (ps: readonly unknown[]) => {
      seen.lists++;
      seen.requests += ps.length;
      return original(ps);
    };
  }
  return seen;
}

const HOLDERS = Array.from({ length: 12 }, (_, i) => `h${i}`);

describe('lease requests coalesced', () => {
  it('gives a contended resource to exactly one of many concurrent holders and tells the rest who has it', () =>
    withApp('http coalesce contended', async (app, lh) => {
      const seen = countLists(lh.engine);
      const answers = await Promise.all(
        HOLDERS.map((holder) => call(app, 'POST', '/api/leases', { resource: 'r', holder })),
      );
      const winners = answers.filter((a) => a.status === 201);
      assert.equal(winners.length, 1);
      assert.equal(winners[0]!.body.token, 1);
      for (const refused of answers.filter((a) => a.status !== 201)) {
        assert.equal(refused.status, 409);
        assert.equal(refused.body.error?.code, 'lease_held');
        assert.equal(refused.body.error?.details?.holder, winners[0]!.body.holder);
      }
      // Same resource: never two in one statement, so these went one at a time.
      assert.equal(seen.lists, 0);
    }));

  it('acquires, renews and releases many resources at once, each answered on its own terms', () =>
    withApp('http coalesce many', async (app, lh) => {
      const seen = countLists(lh.engine);
      const acquired = await Promise.all(
        HOLDERS.map((holder, i) =>
          call(app, 'POST', '/api/leases', { resource: `r${i}`, holder, ttlSeconds: 60 }),
        ),
      );
      assert.deepEqual(
        acquired.map((a) => [a.status, a.body.token, a.body.resource]),
        HOLDERS.map((_, i) => [201, 1, `r${i}`]),
      );
      // Every other renew carries a wrong token: those alone are refused.
      const renewed = await Promise.all(
        HOLDERS.map((holder, i) =>
          call(app, 'PUT', '/api/leases/renew', {
            resource: `r${i}`,
            holder,
            token: i % 2 === 0 ? 1 : 2,
            ttlSeconds: 120,
          }),
        ),
      );
      assert.deepEqual(
        renewed.map((a) => a.status),
        HOLDERS.map((_, i) => (i % 2 === 0 ? 200 : 409)),
      );
      for (const [i, a] of renewed.entries()) {
        if (i % 2 === 0) assert.equal(a.body.renewCount, 1);
        else assert.equal(a.body.error?.code, 'lease_lost');
      }
      const released = await Promise.all(
        HOLDERS.map((holder, i) =>
          call(app, 'DELETE', '/api/leases/release', {
            resource: `r${i}`,
            holder: i < 6 ? holder : 'stranger',
            token: 1,
          }),
        ),
      );
      assert.deepEqual(
        released.map((a) => a.status),
        HOLDERS.map((_, i) => (i < 6 ? 200 : 409)),
      );
      const states = await Promise.all(HOLDERS.map((_, i) => lh.leases.get(`r${i}`)));
      assert.deepEqual(
        states.map((l) => l?.state),
        HOLDERS.map((_, i) => (i < 6 ? 'released' : 'active')),
      );
      // The concurrency was real: some requests shared a statement.
      assert.ok(seen.lists > 0, 'no request shared a statement');
      assert.ok(seen.requests > seen.lists);
    }));
});
