import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError, TimeoutError } from '../../../src/core/errors.js';
import type { Engine } from '../../../src/engine/engine.js';
import { LOCKS_TOPIC } from '../../../src/engine/locks.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { EventQueue } from '../../support/events.js';
import { LIVENESS_MS, waitFor, within } from '../../support/wait.js';
import { conformanceCase, requiring, type EngineHarness } from '../harness.js';

const TTL = 10_000;

export function lockEngineCases(harness: EngineHarness): void {
  const h = harness;
  describe(`[${h.name}] engine: advisory locks`, () => {
    const h = requiring(harness, 'advisoryLocks');
    conformanceCase(
      h,
      'grants an advisory lock to one holder and null to the next until it is released',
      async ({ engine }) => {
        const first = await engine.advisoryTryLock({ name: 'job' });
        assert.ok(first);
        assert.equal(first.signal.aborted, false);
        assert.equal(await engine.advisoryTryLock({ name: 'job' }), null);
        assert.ok(await engine.advisoryTryLock({ name: 'other' }), 'names are independent');
        assert.equal(await first.release(), true);
        assert.equal(first.signal.aborted, true, 'release aborts the holder signal');
        assert.equal(await first.release(), false, 'a second release is a no-op');
        const second = await engine.advisoryTryLock({ name: 'job' });
        assert.ok(second);
        await second.release();
      },
    );

    conformanceCase(
      h,
      'keeps an advisory lock away from a second engine on the same storage',
      async ({ engine, peer }) => {
        const other = await peer();
        const held = await engine.advisoryTryLock({ name: 'job' });
        assert.ok(held);
        assert.equal(await other.advisoryTryLock({ name: 'job' }), null);
        await held.release();
        const next = await other.advisoryTryLock({ name: 'job' });
        assert.ok(next);
        await next.release();
      },
    );

    conformanceCase(
      h,
      'grants a waiting advisoryLock as soon as the holder releases',
      async ({ engine }) => {
        const held = await engine.advisoryTryLock({ name: 'job' });
        assert.ok(held);
        const waiting = engine.advisoryLock({ name: 'job', signal: new AbortController().signal });
        await held.release();
        const granted = await within(waiting, LIVENESS_MS, 'the waiting advisory lock');
        assert.equal(granted.signal.aborted, false);
        assert.equal(await engine.advisoryTryLock({ name: 'job' }), null);
        await granted.release();
      },
    );

    conformanceCase(
      h,
      'rejects a waiting advisoryLock with the abort reason and leaves the lock to its holder',
      async ({ engine }) => {
        const held = await engine.advisoryTryLock({ name: 'job' });
        assert.ok(held);
        const controller = new AbortController();
        const waiting = engine.advisoryLock({ name: 'job', signal: controller.signal });
        controller.abort(new TimeoutError('gave up'));
        await assert.rejects(waiting, (e: unknown) => isLeaseholdError(e, 'timeout'));
        await held.release();
        // The cancelled waiter must not have taken the lock on its way out.
        const next = await waitFor('the lock to be free', () =>
          engine.advisoryTryLock({ name: 'job' }),
        );
        await next.release();
      },
    );

    conformanceCase(
      h,
      'fires the signal of every held connection lock when its engine closes',
      async ({ engine, peer }) => {
        const other = await peer();
        const advisory = await other.advisoryTryLock({ name: 'a' });
        const session = await other.sessionLockTryAcquire({ name: 's' });
        assert.ok(advisory && session);
        await other.close();
        assert.equal(advisory.signal.aborted, true);
        assert.equal(session.signal.aborted, true);
        assert.ok(isLeaseholdError(advisory.signal.reason, 'lease_lost'));
        if (other !== engine) {
          const next = await waitFor('the advisory lock to be freed', () =>
            engine.advisoryTryLock({ name: 'a' }),
          );
          await next.release();
        }
      },
    );

    conformanceCase(
      h,
      'fires the advisory holder signal when its connection is terminated, and frees the lock',
      async ({ engine }) => {
        const held = await engine.advisoryTryLock({ name: 'job' });
        assert.ok(held?.backendPid);
        await postgres(engine).pool.query('SELECT pg_terminate_backend($1)', [held.backendPid]);
        await waitFor('the holder signal', () => held.signal.aborted);
        assert.ok(isLeaseholdError(held.signal.reason, 'lease_lost'));
        assert.equal(await held.release(), false);
        const next = await waitFor('the lock to be free', () =>
          engine.advisoryTryLock({ name: 'job' }),
        );
        await next.release();
      },
      { requires: ['crossProcess'], engine: 'postgres' },
    );
  });

  describe(`[${h.name}] engine: session locks`, () => {
    const h = requiring(harness, 'sessionLocks');
    conformanceCase(
      h,
      'grants a session lock to one holder at a time with a token that grows on every acquisition',
      async ({ engine }) => {
        const first = await engine.sessionLockTryAcquire({ name: 'job' });
        assert.ok(first);
        assert.equal(await engine.sessionLockTryAcquire({ name: 'job' }), null);
        await first.release();
        const second = await engine.sessionLockTryAcquire({ name: 'job' });
        assert.ok(second);
        assert.ok(second.token > first.token, `${second.token} > ${first.token}`);
        await second.release();
      },
    );

    conformanceCase(
      h,
      'grants a waiting session lock on release, with a higher token',
      async ({ engine }) => {
        const held = await engine.sessionLockTryAcquire({ name: 'job' });
        assert.ok(held);
        const waiting = engine.sessionLockAcquire({
          name: 'job',
          signal: new AbortController().signal,
        });
        await held.release();
        const granted = await within(waiting, LIVENESS_MS, 'the waiting session lock');
        assert.ok(granted.token > held.token);
        await granted.release();
      },
    );

    conformanceCase(h, 'rejects a waiting session lock when aborted', async ({ engine }) => {
      const held = await engine.sessionLockTryAcquire({ name: 'job' });
      assert.ok(held);
      const controller = new AbortController();
      const waiting = engine.sessionLockAcquire({ name: 'job', signal: controller.signal });
      controller.abort();
      await assert.rejects(waiting, (e: unknown) => isLeaseholdError(e, 'aborted'));
      await held.release();
    });

    conformanceCase(
      h,
      'gives the next holder a higher token after the holder connection is terminated',
      async ({ engine }) => {
        const held = await engine.sessionLockTryAcquire({ name: 'job' });
        assert.ok(held?.backendPid);
        await postgres(engine).pool.query('SELECT pg_terminate_backend($1)', [held.backendPid]);
        await waitFor('the holder signal', () => held.signal.aborted);
        assert.ok(isLeaseholdError(held.signal.reason, 'lease_lost'));
        const next = await waitFor('the session lock to be free', () =>
          engine.sessionLockTryAcquire({ name: 'job' }),
        );
        assert.ok(next.token > held.token, `${next.token} > ${held.token}`);
        await next.release();
      },
      { requires: ['crossProcess'], engine: 'postgres' },
    );
  });

  describe(`[${h.name}] engine: lease locks`, () => {
    conformanceCase(
      h,
      'acquires, renews and releases a lease lock, bumping the token on the next term',
      async ({ engine, clock }) => {
        const a = await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
        assert.ok(a.acquired);
        assert.equal(a.lease.token, 1);
        assert.equal(a.lease.resource, 'l');
        const b = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL });
        assert.equal(b.acquired, false);
        assert.equal(b.acquired === false && b.current?.holder, 'a');
        assert.equal(b.acquired === false && b.retryAfterMs, TTL);
        await clock.advance(4_000);
        const renewed = await engine.leaseLockRenew({
          name: 'l',
          holder: 'a',
          token: 1,
          ttlMs: TTL,
        });
        assert.equal(renewed?.expiresAt.getTime(), clock.now().getTime() + TTL);
        assert.equal(
          await engine.leaseLockRenew({ name: 'l', holder: 'a', token: 2, ttlMs: TTL }),
          null,
        );
        const released = await engine.leaseLockRelease({ name: 'l', holder: 'a', token: 1 });
        assert.equal(released?.state, 'released');
        assert.equal(await engine.leaseLockRelease({ name: 'l', holder: 'a', token: 1 }), null);
        const next = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL });
        assert.ok(next.acquired);
        assert.equal(next.lease.token, 2);
      },
    );

    conformanceCase(
      h,
      'gives the live holder its own term back on re-acquire, same token',
      async ({ engine }) => {
        const first = await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
        const again = await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
        assert.ok(first.acquired && again.acquired);
        assert.equal(again.lease.token, first.lease.token);
      },
    );

    conformanceCase(
      h,
      'keeps a released lease lock closed for its quiet period',
      async ({ engine, clock }) => {
        await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL, quietMs: 3_000 });
        await engine.leaseLockRelease({ name: 'l', holder: 'a', token: 1 });
        const early = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL });
        assert.equal(early.acquired, false);
        assert.equal(early.acquired === false && early.retryAfterMs, 3_000);
        const self = await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
        assert.equal(self.acquired, false, 'the quiet period applies to the old holder too');
        await clock.advance(2_999);
        assert.equal(
          (await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL })).acquired,
          false,
        );
        await clock.advance(1);
        const next = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL });
        assert.ok(next.acquired);
        assert.equal(next.lease.token, 2);
      },
    );

    conformanceCase(
      h,
      'keeps a lease lock released early until acquiredAt + atLeast',
      async ({ engine, clock }) => {
        await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
        await clock.advance(1_000);
        const released = await engine.leaseLockRelease({
          name: 'l',
          holder: 'a',
          token: 1,
          atLeastMs: 5_000,
        });
        assert.equal(released?.expiresAt.getTime(), clock.now().getTime() + 4_000);
        await clock.advance(3_999);
        const early = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL });
        assert.equal(early.acquired === false && early.retryAfterMs, 1);
        await clock.advance(1);
        assert.ok((await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL })).acquired);
      },
    );

    conformanceCase(
      h,
      'releases at once when the term already lasted longer than atLeast',
      async ({ engine, clock }) => {
        await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
        await clock.advance(6_000);
        await engine.leaseLockRelease({ name: 'l', holder: 'a', token: 1, atLeastMs: 5_000 });
        assert.ok((await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL })).acquired);
      },
    );

    conformanceCase(
      h,
      'applies the lock delay after an expiry but not after a release',
      async ({ engine, clock }) => {
        await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL, delayMs: 4_000 });
        await clock.advance(TTL);
        const early = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL });
        assert.equal(early.acquired === false && early.retryAfterMs, 4_000);
        await clock.advance(4_000);
        const b = await engine.leaseLockAcquire({
          name: 'l',
          holder: 'b',
          ttlMs: TTL,
          delayMs: 4_000,
        });
        assert.ok(b.acquired);
        await engine.leaseLockRelease({ name: 'l', holder: 'b', token: b.lease.token });
        assert.ok(
          (await engine.leaseLockAcquire({ name: 'l', holder: 'c', ttlMs: TTL })).acquired,
          'a clean release has no delay',
        );
      },
    );

    conformanceCase(
      h,
      'announces a release on the locks topic with the lock name',
      async ({ engine }) => {
        const releases = new EventQueue<string>();
        await engine.notifyListen({ topic: LOCKS_TOPIC, onNotify: releases.push });
        await engine.leaseLockAcquire({ name: 'announced', holder: 'a', ttlMs: TTL });
        await engine.leaseLockRelease({ name: 'announced', holder: 'a', token: 1 });
        assert.equal(await releases.next(), 'announced');
      },
      { requires: ['notifications'] },
    );

    conformanceCase(h, 'returns null for a lease lock never taken', async ({ engine }) => {
      assert.equal(await engine.leaseLockGet({ name: 'nope' }), null);
      const result = await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
      assert.ok(result.acquired);
      assert.equal((await engine.leaseLockGet({ name: 'l' }))?.holder, 'a');
    });

    conformanceCase(
      h,
      'lists the latest term of each lease lock under a prefix, in code point order, with its state',
      async ({ engine, clock }) => {
        const take = async (name: string, holder: string, ttlMs = TTL) => {
          const result = await engine.leaseLockAcquire({ name, holder, ttlMs });
          assert.ok(result.acquired, `${holder} takes ${name}`);
          return result.lease;
        };
        // Code point order puts "B" before "a" (a linguistic collation would not), and "a-b"
        // before "ab" (one that ignores punctuation would not).
        await take('e:ab', 'i1');
        await take('e:a-b', 'i2', 1_000);
        const released = await take('e:B', 'i3');
        await engine.leaseLockRelease({ name: 'e:B', holder: 'i3', token: released.token });
        await take('other', 'i4');
        await clock.advance(1_000); // e:a-b expires
        await take('e:a-b', 'i5'); // a second term: token 2, and the only one listed

        const listed = await engine.leaseLockList({ prefix: 'e:', limit: 10 });
        assert.deepEqual(
          listed.map((l) => [l.resource, l.holder, l.token, l.state]),
          [
            ['e:B', 'i3', 1, 'released'],
            ['e:a-b', 'i5', 2, 'active'],
            ['e:ab', 'i1', 1, 'active'],
          ],
        );
        await clock.advance(TTL);
        assert.deepEqual(
          (await engine.leaseLockList({ prefix: 'e:', limit: 2 })).map((l) => [
            l.resource,
            l.state,
          ]),
          [
            ['e:B', 'released'],
            ['e:a-b', 'expired'],
          ],
          'limit keeps the first names; an unrenewed term reads expired',
        );
        assert.equal((await engine.leaseLockList({ limit: 10 })).length, 4, 'no prefix: all');
        assert.deepEqual(await engine.leaseLockList({ prefix: 'e:%', limit: 10 }), []);
      },
    );
  });

  describe(`[${h.name}] engine: schedule slots`, () => {
    conformanceCase(
      h,
      'claims a started slot once and never again, and refuses one not started yet',
      async ({ engine, clock }) => {
        const slot = clock.now();
        const claim = await engine.scheduleSlotClaim({ name: 's', slot, holder: 'a', token: 3 });
        assert.equal(claim?.holder, 'a');
        assert.equal(claim?.token, 3);
        assert.equal(claim?.slot.getTime(), slot.getTime());
        assert.equal(await engine.scheduleSlotClaim({ name: 's', slot, holder: 'b' }), null);
        assert.ok(await engine.scheduleSlotClaim({ name: 'other', slot, holder: 'b' }));
        const future = new Date(slot.getTime() + 1_000);
        assert.equal(
          await engine.scheduleSlotClaim({ name: 's', slot: future, holder: 'a' }),
          null,
        );
        await clock.advance(1_000);
        assert.ok(await engine.scheduleSlotClaim({ name: 's', slot: future, holder: 'b' }));
        const listed = await engine.scheduleSlotList({ name: 's', limit: 10 });
        assert.deepEqual(
          listed.map((s) => [s.slot.getTime(), s.holder]),
          [
            [future.getTime(), 'b'],
            [slot.getTime(), 'a'],
          ],
        );
        assert.equal(await engine.scheduleSlotPrune({ name: 's', before: future }), 1);
        assert.equal((await engine.scheduleSlotList({ name: 's', limit: 10 })).length, 1);
      },
    );

    conformanceCase(
      h,
      'summarises each schedule from its newest claimed slot, with the next slot recorded by its claimant and the run count',
      async ({ engine, clock }) => {
        assert.deepEqual(await engine.scheduleList({ limit: 10 }), []);
        const start = clock.now().getTime();
        const at = (s: number): Date => new Date(start + s * 1_000);
        for (let i = 0; i < 3; i++) {
          const claim = await engine.scheduleSlotClaim({
            name: 'report',
            slot: at(i),
            holder: `i${i}`,
            token: 10 + i,
            nextSlot: at(i + 1),
          });
          assert.equal(claim?.nextSlot?.getTime(), at(i + 1).getTime());
          await clock.advance(1_000);
        }
        await engine.scheduleSlotClaim({ name: 'Audit', slot: at(0), holder: 'old' });

        const summaries = await engine.scheduleList({ limit: 10 });
        assert.deepEqual(
          summaries.map((s) => ({ ...s, lastSlot: s.lastSlot.getTime() })),
          [
            {
              name: 'Audit',
              lastSlot: at(0).getTime(),
              holder: 'old',
              token: null,
              claimedAt: at(3),
              nextSlot: null,
              runs: 1,
            },
            {
              name: 'report',
              lastSlot: at(2).getTime(),
              holder: 'i2',
              token: 12,
              claimedAt: at(2),
              nextSlot: at(3),
              runs: 3,
            },
          ],
        );
        const [newest] = await engine.scheduleSlotList({ name: 'report', limit: 1 });
        assert.equal(newest?.nextSlot?.getTime(), at(3).getTime(), 'the slot list carries it too');

        assert.equal(await engine.scheduleSlotPrune({ name: 'report', before: at(2) }), 2);
        assert.equal(await engine.scheduleSlotPrune({ name: 'Audit', before: at(1) }), 1);
        assert.deepEqual(
          (await engine.scheduleList({ limit: 1 })).map((s) => [s.name, s.runs]),
          [['report', 1]],
          'pruned slots no longer count, and a schedule with none kept is not listed',
        );
      },
    );
  });

  describe(`[${h.name}] engine: fences`, () => {
    conformanceCase(
      h,
      'accepts a newer or equal token and rejects an older one with stale_token',
      async ({ engine }) => {
        assert.equal(await engine.fenceGet({ scope: 'f' }), null);
        await engine.fenceCheck({ scope: 'f', token: 5 });
        await engine.fenceCheck({ scope: 'f', token: 5 });
        await engine.fenceCheck({ scope: 'f', token: 7 });
        await assert.rejects(engine.fenceCheck({ scope: 'f', token: 6 }), (e: unknown) => {
          assert.ok(isLeaseholdError(e, 'stale_token'));
          assert.equal(e.details.newest, 7);
          return true;
        });
        assert.equal(await engine.fenceGet({ scope: 'f' }), 7);
        await engine.fenceCheck({ scope: 'other', token: 1 });
      },
    );

    conformanceCase(
      h,
      'records a fence check made in a transaction only if the transaction commits',
      async ({ engine }) => {
        const client = await postgres(engine).pool.connect();
        try {
          await client.query('BEGIN');
          await engine.fenceCheck({ scope: 'f', token: 9, tx: client });
          await client.query('ROLLBACK');
          assert.equal(await engine.fenceGet({ scope: 'f' }), null);
          await client.query('BEGIN');
          await engine.fenceCheck({ scope: 'f', token: 4, tx: client });
          await client.query('COMMIT');
          assert.equal(await engine.fenceGet({ scope: 'f' }), 4);
          await client.query('BEGIN');
          await assert.rejects(
            engine.fenceCheck({ scope: 'f', token: 3, tx: client }),
            (e: unknown) => isLeaseholdError(e, 'stale_token'),
          );
          await client.query('ROLLBACK');
        } finally {
          client.release();
        }
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );
  });
}

function postgres(engine: Engine): PostgresEngine {
  assert.ok(engine instanceof PostgresEngine, 'this case needs a PostgresEngine');
  return engine;
}
