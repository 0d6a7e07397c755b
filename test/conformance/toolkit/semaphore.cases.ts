import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError, type LeaseLostError } from '../../../src/core/errors.js';
import type { SemaphorePermit } from '../../../src/core/types.js';
import { EventQueue } from '../../support/events.js';
import { LIVENESS_MS, waitFor, within } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

// ttl 9 s, margin 0.9 s: an acquired permit is trusted for 8.1 s.
const TTL = 9_000;
const TRUST_MS = 9_000 - 900;

export function semaphoreCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: semaphores`, () => {
    conformanceCase(
      h,
      'acquire() grants permits with a token and a live signal, then null when all are taken',
      async ({ lh }) => {
        const sem = lh.locks.semaphore('exports', { permits: 2 });
        const a = await sem.acquire({ holder: 'a', ttl: TTL });
        const b = await sem.acquire({ holder: 'b', ttl: TTL });
        assert.ok(a && b);
        assert.equal(a.signal.aborted, false);
        assert.equal(a.isHeld(), true);
        assert.ok(b.token > a.token);
        assert.deepEqual([a.slot, b.slot], [0, 1]);
        assert.equal(await sem.acquire({ holder: 'c', ttl: TTL }), null);
        assert.deepEqual(
          (await sem.list()).map((p) => p.holder),
          ['a', 'b'],
        );
        // A second handle on the name contends like another process.
        const again = lh.locks.semaphore('exports', { permits: 2 });
        assert.equal(await again.acquire({ ttl: TTL }), null);
        assert.equal(await a.release(), true);
        assert.equal(a.signal.aborted, true, 'release aborts the permit signal');
        assert.ok(isLeaseholdError(a.signal.reason, 'aborted'));
        assert.equal(await a.release(), false, 'a second release is a no-op');
        const c = await again.acquire({ ttl: TTL });
        assert.ok(c, 'the released slot is free at once');
        assert.equal(c.slot, 0);
        assert.ok(c.token > b.token);
        await Promise.all([b.release(), c.release()]);
      },
    );

    conformanceCase(
      h,
      'an acquired permit is not renewed: its signal aborts at ttl - margin and its slot frees at ttl',
      async ({ lh, clock }) => {
        const sem = lh.locks.semaphore('s', { permits: 1 });
        const lost = new EventQueue<LeaseLostError>();
        const permit = await sem.acquire({ holder: 'a', ttl: TTL, onLost: lost.push });
        assert.ok(permit);
        await clock.advance(TRUST_MS - 1);
        assert.equal(permit.signal.aborted, false);
        await clock.advance(1);
        assert.equal(permit.signal.aborted, true, 'aborted at the trust deadline');
        assert.ok(isLeaseholdError(await lost.next(), 'lease_lost'));
        assert.equal(permit.isHeld(), false);
        assert.equal(await sem.acquire({ holder: 'b', ttl: TTL }), null, 'valid until its expiry');
        await clock.advance(TTL - TRUST_MS);
        const next = await sem.acquire({ holder: 'b', ttl: TTL });
        assert.ok(next, 'the expired permit freed its slot');
        assert.ok(next.token > permit.token);
        await next.release();
      },
    );

    conformanceCase(
      h,
      'hold() keeps a permit by renewing it, same token, past its ttl',
      async ({ lh, clock }) => {
        const sem = lh.locks.semaphore('s', { permits: 1 });
        const renewals = new EventQueue<SemaphorePermit>();
        const held = await sem.hold({
          holder: 'a',
          ttl: TTL,
          renewEvery: 3_000,
          onRenewed: renewals.push,
        });
        assert.ok(held);
        for (let i = 1; i <= 4; i++) {
          await clock.advance(3_000);
          const permit = await renewals.next(LIVENESS_MS, `renewal ${i}`);
          assert.equal(permit.renewCount, i);
          assert.equal(permit.token, held.token);
          assert.equal(permit.slot, held.slot);
        }
        assert.equal(held.isHeld(), true, '12 s in, past the 9 s ttl');
        assert.equal(held.permit.renewCount, 4);
        assert.equal(await sem.acquire({ holder: 'b', ttl: TTL }), null);
        assert.equal(await held.release(), true);
        assert.ok(await sem.acquire({ holder: 'b', ttl: TTL }));
      },
    );

    conformanceCase(
      h,
      'a held permit is lost when its renewal is refused (its slot was taken after it expired)',
      async ({ lh, engine, clock }) => {
        const sem = lh.locks.semaphore('s', { permits: 1 });
        const held = await sem.hold({ holder: 'a', ttl: TTL, renewEvery: 3_000 });
        assert.ok(held);
        // Someone else frees and retakes the slot behind the holder's back: the stale term's
        // renewal must be refused.
        await engine.semaphoreRelease({
          name: 's',
          slot: held.slot,
          holder: 'a',
          token: held.token,
        });
        const other = await engine.semaphoreAcquire({
          name: 's',
          holder: 'b',
          permits: 1,
          ttlMs: TTL,
        });
        assert.ok(other.acquired);
        await clock.advance(3_000);
        await waitFor('the refused renewal', () => held.signal.aborted);
        assert.ok(isLeaseholdError(held.signal.reason, 'lease_lost'));
        assert.equal(await held.release(), false);
      },
    );

    conformanceCase(
      h,
      'wait: a waiting hold() gets the permit a holder releases',
      async ({ lh, clock }) => {
        const sem = lh.locks.semaphore('s', { permits: 1 });
        const first = await sem.acquire({ holder: 'a', ttl: 60_000 });
        assert.ok(first);
        const before = clock.pendingTimers();
        const waiting = sem.hold({ holder: 'b', ttl: TTL, wait: true });
        await waitFor('the waiter to sleep', () => clock.pendingTimers() > before);
        await first.release();
        const second = await within(waiting, LIVENESS_MS, 'the waiting hold()');
        assert.ok(second);
        assert.ok(second.token > first.token);
        await second.release();
      },
      { requires: ['notifications'] },
    );

    conformanceCase(
      h,
      'wait: polls until an expired permit frees its slot (no notification)',
      async ({ lh, clock }) => {
        const sem = lh.locks.semaphore('s', { permits: 1, pollEvery: '1s' });
        const first = await sem.acquire({ holder: 'a', ttl: 5_000 });
        assert.ok(first);
        const waiting = sem.acquire({ holder: 'b', ttl: TTL, wait: { timeout: '1m' } });
        let settled = false;
        void waiting.finally(() => (settled = true)).catch(() => {});
        // Each try is a round trip: step the clock until the waiter's try after the expiry.
        for (let i = 0; i < 60 && !settled; i++) {
          await clock.advance(1_000);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const second = await within(waiting, LIVENESS_MS, 'the waiting acquire()');
        assert.ok(second);
        assert.ok(second.token > first.token);
        await second.release();
      },
    );

    conformanceCase(
      h,
      'wait: rejects with code timeout on the injected clock and takes no permit',
      async ({ lh, clock }) => {
        const sem = lh.locks.semaphore('s', { permits: 1, pollEvery: '1s' });
        const first = await sem.acquire({ holder: 'a', ttl: 60_000 });
        assert.ok(first);
        const waiting = sem.hold({ holder: 'b', ttl: TTL, wait: { timeout: '5s' } });
        const rejected = assert.rejects(waiting, (e: unknown) => isLeaseholdError(e, 'timeout'));
        await clock.advance(5_000);
        await within(rejected, LIVENESS_MS, 'the timed-out hold()');
        assert.deepEqual(
          (await sem.list()).map((p) => p.holder),
          ['a'],
        );
        const controller = new AbortController();
        controller.abort(new Error('not now'));
        await assert.rejects(
          sem.acquire({ ttl: TTL, wait: { signal: controller.signal } }),
          /not now/,
        );
      },
    );

    conformanceCase(
      h,
      'rejects bad names, permits and options with invalid_argument naming the field, taking nothing',
      async ({ lh }) => {
        const field = (name: string) => (e: unknown) =>
          isLeaseholdError(e, 'invalid_argument') && e.details.field === name;
        for (const permits of [0, -1, 1.5, 10_001, Number.NaN, '3', undefined]) {
          assert.throws(
            () => lh.locks.semaphore('s', { permits } as { permits: number }),
            field('permits'),
            `permits ${String(permits)}`,
          );
        }
        assert.ok(lh.locks.semaphore('s', { permits: 10_000 }), '10,000 is the most');
        assert.throws(() => lh.locks.semaphore('', { permits: 1 }), field('name'));
        assert.throws(() => lh.locks.semaphore('a\u0000b', { permits: 1 }), field('name'));
        assert.throws(
          () => lh.locks.semaphore('s', null as unknown as { permits: number }),
          field('options'),
        );
        assert.throws(
          () => lh.locks.semaphore('s', { permits: 1, pollEvery: 0 }),
          field('pollEvery'),
        );
        const sem = lh.locks.semaphore('s', { permits: 1 });
        await assert.rejects(sem.acquire({} as { ttl: number }), field('ttl'));
        await assert.rejects(sem.acquire({ ttl: 5 }), field('ttl'));
        await assert.rejects(sem.acquire({ ttl: '2 days' }), field('ttl'));
        await assert.rejects(sem.acquire({ ttl: TTL, holder: '' }), field('holder'));
        await assert.rejects(sem.acquire({ ttl: TTL, margin: TTL }), field('margin'));
        await assert.rejects(
          sem.acquire({ ttl: TTL, renewEvery: 1_000 } as { ttl: number }),
          field('renewEvery'),
        );
        await assert.rejects(sem.hold({ ttl: TTL, renewEvery: TTL }), field('renewEvery'));
        await assert.rejects(
          sem.acquire({ ttl: TTL, wait: 'yes' as unknown as true }),
          field('wait'),
        );
        await assert.rejects(
          sem.acquire({ ttl: TTL, wait: { timeout: 'soon' } }),
          field('timeout'),
        );
        await assert.rejects(
          sem.acquire({ ttl: TTL, onLost: 'x' as unknown as () => void }),
          field('onLost'),
        );
        assert.deepEqual(await sem.list(), [], 'no bad call took a permit');
      },
    );
  });
}
