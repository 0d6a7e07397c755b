// lh.close() gives up what the instance still holds in the background (decision 0285): each
// term ends as lost, so work still running under it learns that it is no longer exclusive, and
// is released for the next holder. The registry that lets it keeps only terms still held.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { isLeaseholdError } from '../../src/core/errors.js';
import { HeldTerms, type HeldTerm } from '../../src/core/held-terms.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { Leasehold } from '../../src/leasehold.js';

/** A term that counts how often it was given up and ends (its signal fires) at the first. */
function term(): HeldTerm & { given: string[]; end(): void } {
  const controller = new AbortController();
  const t = {
    given: [] as string[],
    signal: controller.signal,
    end: () => controller.abort(new Error('ended')),
    relinquish: (why: string) => {
      t.given.push(why);
      controller.abort(new Error(why));
      return Promise.resolve(true);
    },
  };
  return t;
}

/** Resolves once `signal` aborts. */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

describe('HeldTerms', () => {
  it('forgets a term as soon as it ends, however it ends', async () => {
    const terms = new HeldTerms();
    const [a, b] = [terms.track(term()), terms.track(term())];
    assert.equal(terms.size, 2);
    a.end();
    assert.equal(terms.size, 1, 'an ended term is not kept');
    await b.relinquish('by hand');
    assert.equal(terms.size, 0);
    const ended = term();
    ended.end();
    terms.track(ended);
    assert.equal(terms.size, 0, 'a term that had ended already is not kept');
  });

  it('gives up each held term once, and a failed release does not stop the others', async () => {
    const terms = new HeldTerms();
    let failed = 0;
    terms.track({
      signal: new AbortController().signal,
      relinquish: () => {
        failed++;
        return Promise.reject(new Error('database unreachable'));
      },
    });
    const held = [terms.track(term()), terms.track(term())];
    await terms.relinquishAll('closing');
    await terms.relinquishAll('closing again');
    assert.deepEqual(
      held.map((t) => t.given),
      [['closing'], ['closing']],
    );
    assert.equal(failed, 1, 'the failing one was tried once, and its error swallowed');
    assert.equal(terms.size, 0);
  });
});

describe('lh.close() with terms held', () => {
  it('ends held leases, lease locks and permits as lost, their signals fired', async () => {
    const lh = Leasehold.fromEngine(new MemoryEngine({ clock: new ManualClock() }));
    const lost: string[] = [];
    const lease = await lh.leases.hold('report', {
      holder: 'a',
      ttl: '10m',
      onLost: () => lost.push('report'),
    });
    const lock = lh.locks.lease('nightly', { holder: 'a', ttl: '10m' });
    await lock.lock();
    const permit = await lh.locks.semaphore('exports', { permits: 1 }).hold({
      holder: 'a',
      ttl: '10m',
    });
    const released = await lh.leases.hold('released', { holder: 'a', ttl: '10m' });
    await released.release();
    await lh.close();
    assert.equal(lease.state, 'lost');
    assert.equal(permit?.state, 'lost');
    assert.deepEqual(lost, ['report'], 'onLost is called, as for any loss');
    for (const signal of [lease.signal, lock.signal, permit!.signal])
      assert.ok(isLeaseholdError(signal.reason, 'lease_lost'), `${String(signal.reason)}`);
    assert.equal(released.state, 'released', 'a term released before close stays released');
    // That the database then has them free is test/processes/close-exits.test.ts's.
  });

  it('rejects a withLease or runLocked whose term close() gave up while its function ran', async () => {
    const lh = Leasehold.fromEngine(new MemoryEngine({ clock: new ManualClock() }));
    let started = 0;
    let bothStarted!: () => void;
    const whenBothStarted = new Promise<void>((resolve) => (bothStarted = resolve));
    /** Work that runs until its term ends, then reports success anyway. */
    const work = async (signal: AbortSignal): Promise<string> => {
      if (++started === 2) bothStarted();
      await aborted(signal);
      return 'done anyway';
    };
    const outcome = (call: Promise<unknown>): Promise<string> =>
      call.then(
        (value) => `resolved ${JSON.stringify(value)}`,
        (error: unknown) =>
          isLeaseholdError(error, 'lease_lost') ? 'lease_lost' : `rejected ${String(error)}`,
      );
    const withLease = outcome(
      lh.leases.withLease('report', { holder: 'a', ttl: '10m' }, ({ signal }) => work(signal)),
    );
    const runLocked = outcome(
      lh.locks
        .lease('nightly', { holder: 'a', ttl: '10m' })
        .runLocked((_token, signal) => work(signal)),
    );
    await whenBothStarted;
    await lh.close();
    assert.deepEqual(await Promise.all([withLease, runLocked]), ['lease_lost', 'lease_lost']);
  });
});
