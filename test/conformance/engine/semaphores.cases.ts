import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { LOCKS_TOPIC } from '../../../src/engine/locks.js';
import { semaphoreWakeKey } from '../../../src/engine/semaphores.js';
import { EventQueue } from '../../support/events.js';
import { conformanceCase, type EngineHarness } from '../harness.js';
import { LIVENESS_MS } from '../../support/wait.js';

const TTL = 10_000;

export function semaphoreEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: semaphores`, () => {
    conformanceCase(
      h,
      'grants at most `permits` permits, lowest slot first, then refuses with the first expiry',
      async ({ engine, clock }) => {
        const granted = [];
        for (const holder of ['a', 'b', 'c']) {
          const result = await engine.semaphoreAcquire({
            name: 's',
            holder,
            permits: 3,
            ttlMs: TTL,
          });
          assert.ok(result.acquired, `permit for ${holder}`);
          granted.push(result.permit);
        }
        assert.deepEqual(
          granted.map((p) => [p.slot, p.holder, p.state]),
          [
            [0, 'a', 'active'],
            [1, 'b', 'active'],
            [2, 'c', 'active'],
          ],
        );
        assert.equal(granted[0]!.expiresAt.getTime(), clock.now().getTime() + TTL);
        await clock.advance(1_000);
        const refused = await engine.semaphoreAcquire({
          name: 's',
          holder: 'd',
          permits: 3,
          ttlMs: TTL,
        });
        assert.equal(refused.acquired, false);
        assert.equal(refused.acquired === false && refused.retryAfterMs, TTL - 1_000);
        assert.equal((await engine.semaphoreList({ name: 's' })).length, 3);
        const other = await engine.semaphoreAcquire({
          name: 't',
          holder: 'd',
          permits: 1,
          ttlMs: TTL,
        });
        assert.ok(other.acquired, 'names are independent');
      },
    );

    conformanceCase(
      h,
      'gives one holder as many permits as it acquires: each acquire is a new permit',
      async ({ engine }) => {
        const first = await engine.semaphoreAcquire({
          name: 's',
          holder: 'a',
          permits: 2,
          ttlMs: TTL,
        });
        const second = await engine.semaphoreAcquire({
          name: 's',
          holder: 'a',
          permits: 2,
          ttlMs: TTL,
        });
        assert.ok(first.acquired && second.acquired);
        assert.notEqual(first.permit.slot, second.permit.slot);
        assert.ok(second.permit.token > first.permit.token);
        const third = await engine.semaphoreAcquire({
          name: 's',
          holder: 'a',
          permits: 2,
          ttlMs: TTL,
        });
        assert.equal(third.acquired, false);
      },
    );

    conformanceCase(
      h,
      'frees the slot of an expired permit exactly at its expiry, with a higher token',
      async ({ engine, clock }) => {
        const first = await engine.semaphoreAcquire({
          name: 's',
          holder: 'a',
          permits: 1,
          ttlMs: TTL,
        });
        assert.ok(first.acquired);
        assert.equal(first.permit.token, 1);
        await clock.advance(TTL - 1);
        const early = await engine.semaphoreAcquire({
          name: 's',
          holder: 'b',
          permits: 1,
          ttlMs: TTL,
        });
        assert.equal(early.acquired === false && early.retryAfterMs, 1);
        await clock.advance(1);
        assert.deepEqual(await engine.semaphoreList({ name: 's' }), []);
        const next = await engine.semaphoreAcquire({
          name: 's',
          holder: 'b',
          permits: 1,
          ttlMs: TTL,
        });
        assert.ok(next.acquired);
        assert.equal(next.permit.slot, 0);
        assert.equal(next.permit.token, 2);
        assert.equal(
          await engine.semaphoreRenew({ name: 's', slot: 0, holder: 'a', token: 1, ttlMs: TTL }),
          null,
          'the expired permit cannot be renewed back',
        );
      },
    );

    conformanceCase(
      h,
      'hands out strictly increasing tokens per name across slots, releases and expiries',
      async ({ engine, clock }) => {
        const tokens: number[] = [];
        const take = async (holder: string): Promise<{ slot: number; token: number }> => {
          const r = await engine.semaphoreAcquire({ name: 's', holder, permits: 2, ttlMs: TTL });
          assert.ok(r.acquired, holder);
          tokens.push(r.permit.token);
          return r.permit;
        };
        const a = await take('a');
        await take('b');
        assert.ok(
          await engine.semaphoreRelease({ name: 's', slot: a.slot, holder: 'a', token: a.token }),
        );
        await take('c');
        await clock.advance(TTL);
        await take('d');
        await take('e');
        assert.deepEqual(tokens, [1, 2, 3, 4, 5]);
      },
    );

    conformanceCase(
      h,
      'renews a valid permit, and refuses a renew or release with a stale token or holder',
      async ({ engine, clock }) => {
        const got = await engine.semaphoreAcquire({
          name: 's',
          holder: 'a',
          permits: 1,
          ttlMs: TTL,
        });
        assert.ok(got.acquired);
        const { slot, token } = got.permit;
        await clock.advance(4_000);
        const renewed = await engine.semaphoreRenew({
          name: 's',
          slot,
          holder: 'a',
          token,
          ttlMs: 20_000,
        });
        assert.ok(renewed);
        assert.equal(renewed.token, token);
        assert.equal(renewed.renewCount, 1);
        assert.equal(renewed.ttlMs, 20_000);
        assert.equal(renewed.expiresAt.getTime(), clock.now().getTime() + 20_000);
        const stale = { name: 's', slot, holder: 'a', token: token - 1 };
        assert.equal(await engine.semaphoreRenew({ ...stale, ttlMs: TTL }), null);
        assert.equal(await engine.semaphoreRelease(stale), null);
        const stranger = { name: 's', slot, holder: 'b', token };
        assert.equal(await engine.semaphoreRenew({ ...stranger, ttlMs: TTL }), null);
        assert.equal(await engine.semaphoreRelease(stranger), null);
        assert.equal(await engine.semaphoreRelease({ ...stale, token, slot: slot + 1 }), null);
        assert.equal((await engine.semaphoreList({ name: 's' }))[0]?.token, token, 'still held');
      },
    );

    conformanceCase(
      h,
      'frees the slot at once on release, and refuses the released permit afterwards',
      async ({ engine, clock }) => {
        const got = await engine.semaphoreAcquire({
          name: 's',
          holder: 'a',
          permits: 1,
          ttlMs: TTL,
        });
        assert.ok(got.acquired);
        const term = { name: 's', slot: got.permit.slot, holder: 'a', token: got.permit.token };
        const released = await engine.semaphoreRelease(term);
        assert.equal(released?.state, 'released');
        assert.equal(released?.expiresAt.getTime(), clock.now().getTime());
        assert.equal(await engine.semaphoreRelease(term), null, 'a second release is refused');
        assert.equal(await engine.semaphoreRenew({ ...term, ttlMs: TTL }), null);
        const next = await engine.semaphoreAcquire({
          name: 's',
          holder: 'b',
          permits: 1,
          ttlMs: TTL,
        });
        assert.ok(next.acquired, 'granted in the same instant as the release');
        assert.equal(next.permit.token, got.permit.token + 1);
      },
    );

    conformanceCase(
      h,
      'bounds the slots by the permits of each acquire: a lowered count drains, a raised one grows',
      async ({ engine }) => {
        const take = (holder: string, permits: number) =>
          engine.semaphoreAcquire({ name: 's', holder, permits, ttlMs: TTL });
        const held = [];
        for (const holder of ['a', 'b', 'c']) {
          const r = await take(holder, 3);
          assert.ok(r.acquired);
          held.push(r.permit);
        }
        assert.equal((await take('d', 2)).acquired, false, 'slots 0 and 1 are taken');
        const last = held[2]!;
        await engine.semaphoreRelease({ ...last, name: 's' });
        assert.equal((await take('d', 2)).acquired, false, 'slot 2 is beyond 2 permits');
        const first = held[0]!;
        await engine.semaphoreRelease({ ...first, name: 's' });
        const d = await take('d', 2);
        assert.ok(d.acquired);
        assert.equal(d.permit.slot, 0);
        const e = await take('e', 5);
        assert.ok(e.acquired);
        assert.equal(e.permit.slot, 2, 'the lowest free slot below 5');
        assert.deepEqual(
          (await engine.semaphoreList({ name: 's' })).map((p) => p.slot),
          [0, 1, 2],
        );
      },
    );

    conformanceCase(
      h,
      'announces a release on the locks topic',
      async ({ engine }) => {
        const heard = new EventQueue<string>();
        const listening = await engine.notifyListen({
          topic: LOCKS_TOPIC,
          onNotify: (payload) => heard.push(payload),
        });
        try {
          const got = await engine.semaphoreAcquire({
            name: 's',
            holder: 'a',
            permits: 1,
            ttlMs: TTL,
          });
          assert.ok(got.acquired);
          await engine.semaphoreRelease({ ...got.permit });
          assert.equal(await heard.next(LIVENESS_MS, 'the notification'), semaphoreWakeKey('s'));
        } finally {
          await listening.unsubscribe();
        }
      },
      { requires: ['notifications'] },
    );
  });
}
