// lh.close() releases what the instance still holds in the background (decision 0285), and the
// registry that lets it keeps only terms still held.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { HeldTerms, type HeldTerm } from '../../src/core/held-terms.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { Leasehold } from '../../src/leasehold.js';

/** A term that counts its releases and ends (its signal fires) at the first. */
function term(): HeldTerm & { releases: number; end(): void } {
  const controller = new AbortController();
  const t = {
    releases: 0,
    signal: controller.signal,
    end: () => controller.abort(new Error('ended')),
    release: () => {
      t.releases++;
      controller.abort(new Error('released'));
      return Promise.resolve(true);
    },
  };
  return t;
}

describe('HeldTerms', () => {
  it('forgets a term as soon as it ends, however it ends', () => {
    const terms = new HeldTerms();
    const [a, b] = [terms.track(term()), terms.track(term())];
    assert.equal(terms.size, 2);
    a.end();
    assert.equal(terms.size, 1, 'an ended term is not kept');
    void b.release();
    assert.equal(terms.size, 0);
    const ended = term();
    ended.end();
    terms.track(ended);
    assert.equal(terms.size, 0, 'a term that had ended already is not kept');
  });

  it('releases each held term once, and a failed release does not stop the others', async () => {
    const terms = new HeldTerms();
    const failing = terms.track({
      signal: new AbortController().signal,
      release: () => Promise.reject(new Error('database unreachable')),
    });
    const held = [terms.track(term()), terms.track(term())];
    await terms.releaseAll();
    await terms.releaseAll();
    assert.deepEqual(
      held.map((t) => t.releases),
      [1, 1],
    );
    assert.ok(failing, 'the failing release was tried and swallowed');
    assert.equal(terms.size, 0);
  });
});

describe('lh.close() with terms held', () => {
  it('releases held leases, lease locks and permits, and their signals fire', async () => {
    const engine = new MemoryEngine({ clock: new ManualClock() });
    const lh = Leasehold.fromEngine(engine);
    const lease = await lh.leases.hold('report', { holder: 'a', ttl: '10m' });
    const lock = lh.locks.lease('nightly', { holder: 'a', ttl: '10m' });
    await lock.lock();
    const semaphore = lh.locks.semaphore('exports', { permits: 1 });
    const permit = await semaphore.acquire({ holder: 'a', ttl: '10m' });
    const released = await lh.leases.hold('released', { holder: 'a', ttl: '10m' });
    await released.release();
    await lh.close();
    assert.equal(lease.state, 'released');
    assert.equal(permit?.state, 'released');
    for (const signal of [lease.signal, lock.signal, permit!.signal])
      assert.equal(signal.aborted, true, 'the work under each term is told');
    // That the database then has them free is test/processes/close-exits.test.ts's.
  });
});
