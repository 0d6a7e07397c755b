import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Lease } from '../../../src/core/types.js';
import { LeaseManager } from '../../../src/leases/lease-manager.js';
import { isLeaseholdError, type LeaseLostError } from '../../../src/core/errors.js';
import { EventQueue } from '../../support/events.js';
import { faultyEngine } from '../../support/faulty-engine.js';
import { conformanceCase, type EngineHarness } from '../harness.js';
import { LIVENESS_MS } from '../../support/wait.js';

// ttl 9 s, renew every 3 s, margin 0.9 s: trust deadline = sentAt + 8.1 s.
const HOLD = { holder: 'a', ttl: 9_000, renewEvery: 3_000 };
const TRUST_MS = 9_000 - 900;

export function heldLeaseCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: held leases`, () => {
    conformanceCase(
      h,
      'keeps a held lease alive by renewing every renewEvery, same token',
      async ({ lh, clock }) => {
        const renewals = new EventQueue<Lease>();
        const held = await lh.leases.hold('r', { ...HOLD, onRenewed: renewals.push });
        for (let i = 1; i <= 4; i++) {
          await clock.advance(3_000);
          const lease = await renewals.next(LIVENESS_MS, `renewal ${i}`);
          assert.equal(lease.renewCount, i);
          assert.equal(lease.token, held.token);
        }
        // 12 s in, well past the 9 s ttl: still ours because renewals moved the expiry.
        assert.ok(held.isTrusted());
        assert.equal(held.signal.aborted, false);
        assert.equal(
          (await lh.leases.tryAcquire('r', { holder: 'b', ttl: 1_000 })).acquired,
          false,
        );
        await held.release();
      },
    );

    conformanceCase(
      h,
      'fires the signal at the trust deadline when renewals hang, not later',
      async ({ engine, clock }) => {
        const faulty = faultyEngine(engine);
        const leases = new LeaseManager(faulty.engine, clock);
        const lost = new EventQueue<LeaseLostError>();
        const held = await leases.hold('r', { ...HOLD, onLost: lost.push });
        const start = clock.monotonic();
        faulty.set('leaseRenew', 'hang');
        await clock.advance(TRUST_MS - 1);
        assert.equal(held.signal.aborted, false, 'still trusted 1 ms before the deadline');
        assert.equal(
          faulty.calls('leaseRenew'),
          1,
          'the first renewal was sent and is still hanging',
        );
        await clock.advance(1);
        assert.equal(held.signal.aborted, true, 'aborted exactly at the trust deadline');
        assert.equal(clock.monotonic() - start, TRUST_MS);
        const error = await lost.next();
        assert.ok(isLeaseholdError(error, 'lease_lost'));
        assert.equal(held.signal.reason, error);
        assert.equal(held.isTrusted(), false);
        // The database still says the lease is live until its own expiry: nobody else may take it yet.
        assert.equal(
          (await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: 1_000 })).acquired,
          false,
        );
        await clock.advance(9_000 - TRUST_MS);
        assert.equal(
          (await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: 1_000 })).acquired,
          true,
        );
      },
    );

    conformanceCase(
      h,
      'keeps trusting through a failed renewal and recovers on the retry',
      async ({ engine, clock }) => {
        const faulty = faultyEngine(engine);
        const leases = new LeaseManager(faulty.engine, clock);
        const renewals = new EventQueue<Lease>();
        const errors = new EventQueue<unknown>();
        const held = await leases.hold('r', {
          ...HOLD,
          onRenewed: renewals.push,
          onRenewError: errors.push,
        });
        faulty.set('leaseRenew', 'fail');
        await clock.advance(3_000);
        assert.ok(isLeaseholdError(await errors.next(), 'unavailable'));
        faulty.set('leaseRenew', 'pass');
        await clock.advance(450); // the retry comes after margin/2, sooner than renewEvery
        const lease = await renewals.next();
        assert.equal(lease.renewCount, 1);
        assert.equal(held.signal.aborted, false);
        await held.release();
      },
    );

    conformanceCase(
      h,
      'loses the lease when a renewal is refused, calling onLost once',
      async ({ lh, engine, clock }) => {
        const lost = new EventQueue<LeaseLostError>();
        const held = await lh.leases.hold('r', { ...HOLD, onLost: lost.push });
        await engine.leaseReleaseById({ id: held.lease.id }); // an administrator takes it away
        await clock.advance(3_000);
        const error = await lost.next();
        assert.match(error.message, /refused/);
        assert.equal(held.state, 'lost');
        assert.equal(held.signal.aborted, true);
        await clock.advance(30_000);
        assert.equal(lost.length, 0, 'onLost fired only once');
        assert.equal(await held.release(), false);
      },
    );

    conformanceCase(
      h,
      'releases at once so another holder need not wait, and aborts the signal',
      async ({ lh }) => {
        const held = await lh.leases.hold('r', HOLD);
        assert.equal(await held.release(), true);
        assert.equal(held.state, 'released');
        assert.equal(held.signal.aborted, true);
        const next = await lh.leases.acquire('r', { holder: 'b', ttl: 1_000 });
        assert.equal(next?.token, held.token + 1);
      },
    );

    conformanceCase(h, 'stops every timer after release', async ({ lh, clock }) => {
      const held = await lh.leases.hold('r', HOLD);
      await held.release();
      assert.equal(clock.pendingTimers(), 0);
    });

    conformanceCase(
      h,
      'refuses hold() on a lease held by someone else with lease_held',
      async ({ lh }) => {
        await lh.leases.acquire('r', { holder: 'b', ttl: 60_000 });
        await assert.rejects(lh.leases.hold('r', HOLD), (e: unknown) =>
          isLeaseholdError(e, 'lease_held'),
        );
      },
    );

    conformanceCase(
      h,
      'withLease runs the work with the token and releases afterwards',
      async ({ lh }) => {
        const result = await lh.leases.withLease('r', HOLD, async ({ token, signal }) => {
          assert.equal(signal.aborted, false);
          return token * 10;
        });
        assert.deepEqual(result, { ran: true, value: 10 });
        assert.equal((await lh.leases.get('r'))?.state, 'released');
      },
    );

    conformanceCase(
      h,
      'withLease skips the work while someone else holds the lease',
      async ({ lh }) => {
        await lh.leases.acquire('r', { holder: 'b', ttl: 60_000 });
        let ran = false;
        const result = await lh.leases.withLease('r', HOLD, () => {
          ran = true;
        });
        assert.equal(ran, false);
        assert.equal(result.ran, false);
        assert.equal(result.ran === false && result.current?.holder, 'b');
      },
    );

    conformanceCase(h, 'withLease releases and rethrows when the work throws', async ({ lh }) => {
      await assert.rejects(
        lh.leases.withLease('r', HOLD, async () => {
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal((await lh.leases.get('r'))?.state, 'released');
    });

    conformanceCase(
      h,
      'withLease rejects with lease_lost when the lease was lost during the work',
      async ({ engine, clock }) => {
        const faulty = faultyEngine(engine);
        const leases = new LeaseManager(faulty.engine, clock);
        faulty.set('leaseRenew', 'hang');
        await assert.rejects(
          leases.withLease('r', HOLD, async ({ signal }) => {
            await clock.advance(TRUST_MS);
            assert.equal(signal.aborted, true);
            return 'finished anyway';
          }),
          (e: unknown) => isLeaseholdError(e, 'lease_lost'),
        );
      },
    );
  });
}
