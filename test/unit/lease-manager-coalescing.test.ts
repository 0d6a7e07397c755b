// lh.leases shares statements among concurrent callers (leases/lease-coalescers.ts, decision
// 0231): what the HTTP service did for its clients, every caller of the library now gets, and
// the held leases it builds renew and release through the same lists.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { Engine } from '../../src/engine/engine.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { Leasehold } from '../../src/leasehold.js';

/** The memory engine, counting the lease calls that reach it. */
function counted(): { engine: Engine; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const engine = new MemoryEngine({ clock: new ManualClock() });
  const proxy = new Proxy(engine, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !property.startsWith('lease')) return value;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(property, (calls.get(property) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { engine: proxy, calls };
}

const HOLDERS = 8;
const each = <T>(fn: (i: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: HOLDERS }, (_, i) => fn(i)));

describe('lh.leases coalesces concurrent calls', () => {
  it('answers concurrent acquires, renews and releases each as alone, in fewer statements', async () => {
    const { engine, calls } = counted();
    const lh = Leasehold.fromEngine(engine);
    try {
      const leases = await each((i) => lh.leases.acquire(`r${i}`, { holder: `h${i}`, ttl: '30s' }));
      leases.forEach((lease, i) => {
        assert.equal(lease?.resource, `r${i}`);
        assert.equal(lease?.holder, `h${i}`);
        assert.equal(lease?.token, 1);
      });
      const renewed = await each((i) => lh.leases.renew(leases[i]!, { ttl: '60s' }));
      renewed.forEach((lease, i) => assert.equal(lease?.ttlMs, 60_000, `r${i}`));
      // A stale term among them is refused alone; its neighbours are not.
      const mixed = await each((i) =>
        lh.leases.renew(i === 3 ? { ...leases[i]!, token: 99 } : leases[i]!, { ttl: '60s' }),
      );
      assert.deepEqual(
        mixed.map((l) => l !== null),
        Array.from({ length: HOLDERS }, (_, i) => i !== 3),
      );
      const released = await each((i) => lh.leases.release(leases[i]!));
      assert.deepEqual(
        released,
        Array.from({ length: HOLDERS }, () => true),
      );

      const statements = (kind: string) =>
        (calls.get(`lease${kind}`) ?? 0) + (calls.get(`lease${kind}Many`) ?? 0);
      for (const kind of ['Acquire', 'Renew', 'Release']) {
        assert.ok((calls.get(`lease${kind}Many`) ?? 0) >= 1, `${kind}: shared a statement`);
        assert.ok(statements(kind) < HOLDERS * (kind === 'Renew' ? 2 : 1), `${kind}: fewer`);
      }
    } finally {
      await lh.close();
    }
  });

  it('sends a call made alone as a single statement', async () => {
    const { engine, calls } = counted();
    const lh = Leasehold.fromEngine(engine);
    try {
      const lease = await lh.leases.acquire('solo', { holder: 'h', ttl: '30s' });
      assert.ok(await lh.leases.renew(lease!));
      assert.ok(await lh.leases.release(lease!));
      assert.equal(calls.get('leaseAcquire'), 1);
      assert.equal(calls.get('leaseRenew'), 1);
      assert.equal(calls.get('leaseRelease'), 1);
      assert.equal(calls.get('leaseAcquireMany'), undefined);
      assert.equal(calls.get('leaseRenewMany'), undefined);
      assert.equal(calls.get('leaseReleaseMany'), undefined);
    } finally {
      await lh.close();
    }
  });

  it('releases held leases through the same lists', async () => {
    const { engine, calls } = counted();
    const lh = Leasehold.fromEngine(engine);
    try {
      const held = await each((i) => lh.leases.hold(`held${i}`, { holder: `h${i}`, ttl: '30s' }));
      assert.equal(calls.get('leaseAcquire') ?? 0, 0, 'the acquires went as one list');
      assert.deepEqual(
        await each((i) => held[i]!.release()),
        held.map(() => true),
      );
      assert.equal(calls.get('leaseRelease') ?? 0, 0, 'the releases went as one list');
      assert.ok((calls.get('leaseReleaseMany') ?? 0) >= 1);
      for (let i = 0; i < HOLDERS; i++)
        assert.equal((await lh.leases.get(`held${i}`))?.state, 'released');
    } finally {
      await lh.close();
    }
  });

  it('keeps the holder-only calls of the seed API apart from the fenced ones', async () => {
    const lh = Leasehold.memory({ clock: new ManualClock() });
    try {
      const first = (await lh.leases.acquire('r', { holder: 'h', ttl: '30s' }))!;
      assert.equal(
        (await lh.leases.renewAsHolder({ resource: 'r', holder: 'h' }, { ttl: '1m' }))?.ttlMs,
        60_000,
      );
      assert.equal(
        await lh.leases.renewAsHolder({ resource: 'r', holder: 'other' }, { ttl: '1m' }),
        null,
      );
      assert.equal(
        (await lh.leases.releaseAsHolder({ resource: 'r', holder: 'h' }))?.state,
        'released',
      );
      const second = (await lh.leases.acquire('r', { holder: 'h', ttl: '30s' }))!;
      assert.equal(second.token, first.token + 1);
      assert.equal(await lh.leases.releaseTerm(first), null, 'an older term is refused');
      assert.equal(
        (await lh.leases.releaseById(second.id, { holder: 'h', token: second.token }))?.state,
        'released',
      );
      await assert.rejects(lh.leases.releaseById(0), { code: 'invalid_argument' });
      await assert.rejects(lh.leases.renewAsHolder({ resource: '', holder: 'h' }, { ttl: '1m' }), {
        code: 'invalid_argument',
      });
      assert.equal(await lh.leases.countActive(), 0);
    } finally {
      await lh.close();
    }
  });
});
