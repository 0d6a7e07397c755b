import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 10_000;

export function leaseEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: leases`, () => {
    conformanceCase(h, 'acquires a free resource with token 1', async ({ engine, clock }) => {
      const result = await engine.leaseAcquire({
        resource: 'r',
        holder: 'a',
        ttlMs: TTL,
        metadata: { job: 7 },
      });
      assert.ok(result.acquired);
      const { lease } = result;
      assert.equal(lease.resource, 'r');
      assert.equal(lease.holder, 'a');
      assert.equal(lease.token, 1);
      assert.equal(lease.state, 'active');
      assert.deepEqual(lease.metadata, { job: 7 });
      assert.equal(lease.renewCount, 0);
      assert.equal(lease.expiresAt.getTime(), clock.now().getTime() + TTL);
    });

    conformanceCase(
      h,
      'refuses a live lease to another holder and reports the current one',
      async ({ engine }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        const result = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        assert.equal(result.acquired, false);
        assert.equal(result.acquired === false && result.current?.holder, 'a');
      },
    );

    conformanceCase(
      h,
      'lets the live holder re-acquire idempotently: same token, extended expiry',
      async ({ engine, clock }) => {
        const first = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await clock.advance(4_000);
        const again = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(first.acquired && again.acquired);
        assert.equal(again.lease.token, first.lease.token);
        assert.equal(again.lease.acquiredAt.getTime(), first.lease.acquiredAt.getTime());
        assert.equal(again.lease.expiresAt.getTime(), clock.now().getTime() + TTL);
      },
    );

    conformanceCase(
      h,
      'hands an expired lease to the next holder with a higher token',
      async ({ engine, clock }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await clock.advance(TTL);
        const next = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        assert.ok(next.acquired);
        assert.equal(next.lease.token, 2);
        assert.equal(next.lease.holder, 'b');
      },
    );

    conformanceCase(
      h,
      'treats a lease as expired exactly at its expiry instant',
      async ({ engine, clock }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await clock.advance(TTL - 1);
        assert.equal(
          (await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL })).acquired,
          false,
        );
        assert.equal((await engine.leaseGet({ resource: 'r' }))?.state, 'active');
        await clock.advance(1);
        assert.equal((await engine.leaseGet({ resource: 'r' }))?.state, 'expired');
        assert.equal(
          await engine.leaseRenew({ resource: 'r', holder: 'a', token: 1, ttlMs: TTL }),
          null,
        );
      },
    );

    conformanceCase(
      h,
      'gives its own expired lease back to the same holder under a new token',
      async ({ engine, clock }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await clock.advance(TTL + 1);
        const again = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(again.acquired);
        assert.equal(again.lease.token, 2);
      },
    );

    conformanceCase(
      h,
      'renews a live lease from its holder and token, counting renewals',
      async ({ engine, clock }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await clock.advance(3_000);
        const renewed = await engine.leaseRenew({
          resource: 'r',
          holder: 'a',
          token: 1,
          ttlMs: 20_000,
        });
        assert.ok(renewed);
        assert.equal(renewed.renewCount, 1);
        assert.equal(renewed.ttlMs, 20_000);
        assert.equal(renewed.renewedAt?.getTime(), clock.now().getTime());
        assert.equal(renewed.expiresAt.getTime(), clock.now().getTime() + 20_000);
      },
    );

    conformanceCase(h, 'rejects a renew from another holder', async ({ engine }) => {
      await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
      assert.equal(
        await engine.leaseRenew({ resource: 'r', holder: 'b', token: 1, ttlMs: TTL }),
        null,
      );
    });

    conformanceCase(
      h,
      'rejects a renew from a holder whose token was superseded',
      async ({ engine, clock }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await clock.advance(TTL);
        // The same holder name took a new term (token 2); the old term's token must not renew it.
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.equal(
          await engine.leaseRenew({ resource: 'r', holder: 'a', token: 1, ttlMs: TTL }),
          null,
        );
        assert.ok(await engine.leaseRenew({ resource: 'r', holder: 'a', token: 2, ttlMs: TTL }));
      },
    );

    conformanceCase(h, 'rejects a renew of a released lease', async ({ engine }) => {
      await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
      assert.ok(await engine.leaseRelease({ resource: 'r', holder: 'a', token: 1 }));
      assert.equal(
        await engine.leaseRenew({ resource: 'r', holder: 'a', token: 1, ttlMs: TTL }),
        null,
      );
    });

    conformanceCase(
      h,
      'releases so that another holder can acquire at once, with a higher token',
      async ({ engine }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        const released = await engine.leaseRelease({ resource: 'r', holder: 'a', token: 1 });
        assert.equal(released?.state, 'released');
        const next = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        assert.ok(next.acquired);
        assert.equal(next.lease.token, 2);
        assert.equal(next.lease.releasedAt, null);
      },
    );

    conformanceCase(
      h,
      'refuses a release by a stranger, by a stale token, or twice',
      async ({ engine }) => {
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.equal(await engine.leaseRelease({ resource: 'r', holder: 'b', token: 1 }), null);
        assert.equal(await engine.leaseRelease({ resource: 'r', holder: 'a', token: 9 }), null);
        assert.ok(await engine.leaseRelease({ resource: 'r', holder: 'a', token: 1 }));
        assert.equal(await engine.leaseRelease({ resource: 'r', holder: 'a', token: 1 }), null);
      },
    );

    conformanceCase(
      h,
      'never reuses a token across release and re-acquire cycles',
      async ({ engine, clock }) => {
        const tokens: number[] = [];
        for (let i = 0; i < 6; i++) {
          const holder = `h${i % 2}`;
          const result = await engine.leaseAcquire({ resource: 'r', holder, ttlMs: TTL });
          assert.ok(result.acquired);
          tokens.push(result.lease.token);
          if (i % 2 === 0)
            await engine.leaseRelease({ resource: 'r', holder, token: result.lease.token });
          else await clock.advance(TTL);
        }
        assert.deepEqual(tokens, [1, 2, 3, 4, 5, 6]);
      },
    );

    conformanceCase(h, 'keeps tokens per resource', async ({ engine }) => {
      const a = await engine.leaseAcquire({ resource: 'r1', holder: 'a', ttlMs: TTL });
      const b = await engine.leaseAcquire({ resource: 'r2', holder: 'a', ttlMs: TTL });
      assert.ok(a.acquired && b.acquired);
      assert.equal(a.lease.token, 1);
      assert.equal(b.lease.token, 1);
      assert.notEqual(a.lease.id, b.lease.id);
    });

    conformanceCase(
      h,
      'releases by id, guarded by holder when given, forced when not',
      async ({ engine }) => {
        const a = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(a.acquired);
        assert.equal(await engine.leaseReleaseById({ id: a.lease.id, holder: 'b' }), null);
        const forced = await engine.leaseReleaseById({ id: a.lease.id });
        assert.equal(forced?.state, 'released');
        assert.equal(await engine.leaseReleaseById({ id: a.lease.id }), null);
      },
    );

    conformanceCase(
      h,
      'gets by resource and by id, and answers null for unknown ones',
      async ({ engine }) => {
        const a = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(a.acquired);
        assert.equal((await engine.leaseGet({ resource: 'r' }))?.id, a.lease.id);
        assert.equal((await engine.leaseGetById({ id: a.lease.id }))?.resource, 'r');
        assert.equal(await engine.leaseGet({ resource: 'nope' }), null);
        assert.equal(await engine.leaseGetById({ id: 999_999 }), null);
      },
    );

    conformanceCase(
      h,
      'lists leases by state: active, expired, renewed, released, all',
      async ({ engine, clock }) => {
        await engine.leaseAcquire({ resource: 'expires', holder: 'a', ttlMs: 1_000 });
        await engine.leaseAcquire({ resource: 'released', holder: 'a', ttlMs: TTL });
        await engine.leaseAcquire({ resource: 'renewed', holder: 'a', ttlMs: TTL });
        await engine.leaseAcquire({ resource: 'plain', holder: 'a', ttlMs: TTL });
        await engine.leaseRelease({ resource: 'released', holder: 'a', token: 1 });
        await engine.leaseRenew({ resource: 'renewed', holder: 'a', token: 1, ttlMs: TTL });
        await clock.advance(1_000);
        const names = async (filter: 'all' | 'active' | 'expired' | 'renewed' | 'released') =>
          (await engine.leaseList({ filter, limit: 100, offset: 0 })).map((l) => l.resource).sort();
        assert.deepEqual(await names('active'), ['plain', 'renewed']);
        assert.deepEqual(await names('expired'), ['expires']);
        assert.deepEqual(await names('renewed'), ['renewed']);
        assert.deepEqual(await names('released'), ['released']);
        assert.deepEqual(await names('all'), ['expires', 'plain', 'released', 'renewed']);
        assert.equal(await engine.leaseCountActive(), 2, 'the count agrees with the listing');
      },
    );

    conformanceCase(
      h,
      'counts every live lease, beyond any listing page',
      async ({ engine, clock }) => {
        const live = Array.from({ length: 1_050 }, (_, i) => ({
          resource: `r${i}`,
          holder: 'a',
          ttlMs: TTL,
        }));
        await engine.leaseAcquireMany(live);
        await engine.leaseAcquire({ resource: 'short', holder: 'a', ttlMs: 1_000 });
        await engine.leaseRelease({ resource: 'r0', holder: 'a' });
        assert.equal(await engine.leaseCountActive(), 1_050);
        await clock.advance(1_000);
        assert.equal(await engine.leaseCountActive(), 1_049, 'the expired one is not counted');
      },
    );

    conformanceCase(
      h,
      'pages a listing in id order and filters by resource prefix',
      async ({ engine }) => {
        for (const r of ['job:1', 'job:2', 'job:3', 'other'])
          await engine.leaseAcquire({ resource: r, holder: 'a', ttlMs: TTL });
        const page1 = await engine.leaseList({
          filter: 'all',
          limit: 2,
          offset: 0,
          resourcePrefix: 'job:',
        });
        const page2 = await engine.leaseList({
          filter: 'all',
          limit: 2,
          offset: 2,
          resourcePrefix: 'job:',
        });
        assert.deepEqual(
          page1.map((l) => l.resource),
          ['job:1', 'job:2'],
        );
        assert.deepEqual(
          page2.map((l) => l.resource),
          ['job:3'],
        );
      },
    );

    conformanceCase(
      h,
      'shares lease state with a second engine instance',
      async ({ engine, peer }) => {
        const other = await peer();
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        const result = await other.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        assert.equal(result.acquired, false);
      },
    );

    conformanceCase(
      h,
      'returns copies: mutating a returned lease changes nothing stored',
      async ({ engine }) => {
        const a = await engine.leaseAcquire({
          resource: 'r',
          holder: 'a',
          ttlMs: TTL,
          metadata: { n: 1 },
        });
        assert.ok(a.acquired);
        (a.lease.metadata as Record<string, unknown>).n = 2;
        assert.deepEqual((await engine.leaseGet({ resource: 'r' }))?.metadata, { n: 1 });
      },
    );
  });
}
