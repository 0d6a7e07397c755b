// The service's request coalescer: lists of distinct keys, answers in order, failures isolated.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Coalescer } from '../../src/runtime/coalescer.js';
import { waitFor } from '../support/wait.js';

interface Req {
  key: string;
  n: number;
}

/** A coalescer over a fake store that records what it was sent; `failMany` breaks lists. */
function harness(options: { failMany?: boolean; maxBatch?: number; maxInFlight?: number } = {}) {
  const sent: string[][] = [];
  const coalescer = new Coalescer<Req, string>({
    one: async (r) => {
      sent.push([r.key]);
      if (r.n < 0) throw new Error(`bad ${r.key}`);
      return `${r.key}:${r.n}`;
    },
    many: async (rs) => {
      sent.push(rs.map((r) => r.key));
      if (options.failMany) throw new Error('list refused');
      return rs.map((r) => `${r.key}:${r.n}`);
    },
    key: (r) => r.key,
    ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
    ...(options.maxInFlight === undefined ? {} : { maxInFlight: options.maxInFlight }),
  });
  return { coalescer, sent };
}

describe('Coalescer', () => {
  it('sends a lone request on its own', async () => {
    const { coalescer, sent } = harness();
    assert.equal(await coalescer.run({ key: 'a', n: 1 }), 'a:1');
    assert.deepEqual(sent, [['a']]);
  });

  it('sends requests made in one turn as one list and answers each caller with its own result', async () => {
    const { coalescer, sent } = harness();
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((key, n) => coalescer.run({ key, n })),
    );
    assert.deepEqual(answers, ['a:0', 'b:1', 'c:2', 'd:3']);
    assert.deepEqual(sent, [['a', 'b', 'c', 'd']]);
    assert.deepEqual(coalescer.sent, { statements: 1, requests: 4 });
  });

  it('never puts two requests for one key in a list, and keeps their order', async () => {
    const { coalescer, sent } = harness({ maxInFlight: 1 });
    const answers = await Promise.all([
      coalescer.run({ key: 'a', n: 1 }),
      coalescer.run({ key: 'b', n: 2 }),
      coalescer.run({ key: 'a', n: 3 }),
      coalescer.run({ key: 'a', n: 4 }),
    ]);
    assert.deepEqual(answers, ['a:1', 'b:2', 'a:3', 'a:4']);
    assert.deepEqual(sent, [['a', 'b'], ['a'], ['a']]);
  });

  it('retries each request alone when its list fails, so each caller gets its own answer or error', async () => {
    const { coalescer, sent } = harness({ failMany: true });
    const settled = await Promise.allSettled([
      coalescer.run({ key: 'a', n: 1 }),
      coalescer.run({ key: 'b', n: -1 }),
      coalescer.run({ key: 'c', n: 3 }),
    ]);
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
      ['a:1', 'bad b', 'c:3'],
    );
    assert.deepEqual(sent, [['a', 'b', 'c'], ['a'], ['b'], ['c']]);
  });

  it(
    'lets the others go when a statement stalls, so one row lock cannot hold every request back',
    { timeout: 5_000 },
    async () => {
      let unblock: () => void = () => {};
      const sent: string[][] = [];
      const coalescer = new Coalescer<Req, string>({
        one: async (r) => {
          sent.push([r.key]);
          if (r.key === 'locked') await new Promise<void>((resolve) => (unblock = resolve));
          return r.key;
        },
        many: async (rs) => {
          sent.push(rs.map((r) => r.key));
          return rs.map((r) => r.key);
        },
        key: (r) => r.key,
        maxInFlight: 1,
        stallMs: 20,
      });
      const locked = coalescer.run({ key: 'locked', n: 0 });
      await new Promise((resolve) => setImmediate(resolve));
      const others = await Promise.all([
        coalescer.run({ key: 'a', n: 1 }),
        coalescer.run({ key: 'b', n: 2 }),
      ]);
      assert.deepEqual(others, ['a', 'b']);
      assert.deepEqual(sent, [['locked'], ['a', 'b']]);
      unblock();
      assert.equal(await locked, 'locked');
    },
  );

  describe('order keys and unknown outcomes (decision 0220)', () => {
    /** A store whose `locked` request stays in flight until the test unblocks it. */
    function orderedStore(failMany?: Error) {
      let unblock: () => void = () => {};
      const sent: string[][] = [];
      const coalescer = new Coalescer<Req & { order?: string }, string>({
        one: async (r) => {
          sent.push([r.key]);
          if (r.key === 'locked') await new Promise<void>((resolve) => (unblock = resolve));
          return r.key;
        },
        many: async (rs) => {
          sent.push(rs.map((r) => r.key));
          if (failMany) throw failMany;
          return rs.map((r) => r.key);
        },
        orderKeys: (r) => (r.order ? [r.order] : []),
        failWhole: (error) =>
          (error as Error).message === 'answer lost' ? new Error('outcome unknown') : undefined,
        stallMs: 20,
      });
      return { coalescer, sent, unblock: () => unblock() };
    }

    it('holds back, under any stall, a request whose order key a stalled list holds, and lets the others go', async () => {
      const store = orderedStore();
      const locked = store.coalescer.run({ key: 'locked', n: 0, order: 'p' });
      await new Promise((resolve) => setImmediate(resolve));
      let sameDone = false;
      const same = store.coalescer.run({ key: 'same', n: 1, order: 'p' });
      void same.then(() => (sameDone = true));
      // Goes once the stall is noticed; `same` would have gone with it, were it not held.
      assert.equal(await store.coalescer.run({ key: 'other', n: 2 }), 'other');
      assert.equal(sameDone, false);
      assert.deepEqual(store.sent, [['locked'], ['other']]);
      store.unblock();
      assert.deepEqual(await Promise.all([locked, same]), ['locked', 'same']);
      assert.deepEqual(store.sent, [['locked'], ['other'], ['same']]);
    });

    it('rejects every caller of a list whose outcome is unknown instead of retrying each alone', async () => {
      const store = orderedStore(new Error('answer lost'));
      const settled = await Promise.allSettled(
        ['a', 'b', 'c'].map((key, n) => store.coalescer.run({ key, n })),
      );
      assert.deepEqual(
        settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : s.value)),
        ['outcome unknown', 'outcome unknown', 'outcome unknown'],
      );
      assert.deepEqual(store.sent, [['a', 'b', 'c']]);
    });

    it('retries a failed list with order keys one request after another, in call order', async () => {
      const store = orderedStore(new Error('refused'));
      const calls = ['a', 'b', 'c'].map((key, n) => store.coalescer.run({ key, n, order: 'p' }));
      assert.deepEqual(await Promise.all(calls), ['a', 'b', 'c']);
      assert.deepEqual(store.sent, [['a', 'b', 'c'], ['a'], ['b'], ['c']]);
    });
  });

  it('caps a list at maxBatch and gathers requests while maxInFlight statements run', async () => {
    const { coalescer, sent } = harness({ maxBatch: 3, maxInFlight: 1 });
    const first = coalescer.run({ key: 'first', n: 0 });
    await new Promise((resolve) => setImmediate(resolve)); // `first` is now in flight alone
    const rest = Array.from({ length: 7 }, (_, n) => coalescer.run({ key: `k${n}`, n }));
    await Promise.all([first, ...rest]);
    assert.deepEqual(
      sent.map((list) => list.length),
      [1, 3, 3, 1],
    );
  });

  describe('gathering (gatherMs)', () => {
    /**
     * A store whose statements stay in flight until the test releases them, so callers can
     * arrive while one is out, as they do while the database writes.
     */
    function heldStore(gatherMs: number) {
      const sent: string[][] = [];
      const held: (() => void)[] = [];
      const hold = <T>(answer: T): Promise<T> =>
        new Promise((resolve) => held.push(() => resolve(answer)));
      const coalescer = new Coalescer<Req, string>({
        one: (r) => {
          sent.push([r.key]);
          return hold(r.key);
        },
        many: (rs) => {
          sent.push(rs.map((r) => r.key));
          return hold(rs.map((r) => r.key));
        },
        key: (r) => r.key,
        gatherMs,
      });
      const ask = (key: string): Promise<string> => coalescer.run({ key, n: 0 });
      /** Answers the oldest statement in flight. */
      const release = (): void => held.shift()?.();
      const listsSent = (n: number): Promise<true> =>
        waitFor(`${n} lists sent`, () => sent.length >= n || undefined);
      return { sent, ask, release, listsSent };
    }

    /**
     * One turn of the event loop: what the coalescer queued with setImmediate has run. An HTTP
     * client's next request comes later than that (its round trip).
     */
    const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

    it('merges callers that take turns into one list instead of alternating halves', async () => {
      const store = heldStore(60_000);
      // c0 goes alone; c1-c3 arrive while it is in flight: two cohorts.
      const c0 = store.ask('c0');
      await store.listsSent(1);
      const rest = ['c1', 'c2', 'c3'].map(store.ask);
      store.release();
      await c0;
      await store.listsSent(2);
      const c0Again = store.ask('c0'); // back while [c1, c2, c3] is in flight
      store.release();
      await Promise.all(rest);
      await nextTurn(); // without gathering, [c0] has gone alone by now
      const restAgain = ['c1', 'c2', 'c3'].map(store.ask);
      await store.listsSent(3);
      assert.deepEqual(store.sent, [['c0'], ['c1', 'c2', 'c3'], ['c0', 'c1', 'c2', 'c3']]);
      store.release();
      await Promise.all([c0Again, ...restAgain]);
    });

    it('merges two cohorts of equal size, waiting for the answered callers and the waiting ones', async () => {
      const store = heldStore(60_000);
      const ab = [store.ask('a'), store.ask('b')];
      await store.listsSent(1);
      const cd = [store.ask('c'), store.ask('d')]; // as many as in flight
      store.release();
      await Promise.all(ab);
      await nextTurn(); // waiting only for as many as were answered, [c, d] has gone by now
      const abAgain = [store.ask('a'), store.ask('b')];
      await store.listsSent(2);
      assert.deepEqual(store.sent, [
        ['a', 'b'],
        ['c', 'd', 'a', 'b'],
      ]);
      store.release();
      await Promise.all([...cd, ...abAgain]);
    });

    it('sends what it has once gatherMs has passed when a caller does not come back', async () => {
      const store = heldStore(20);
      const first = [store.ask('a'), store.ask('b')];
      await store.listsSent(1);
      store.release();
      await Promise.all(first);
      await nextTurn();
      const again = store.ask('a'); // b does not ask again
      await store.listsSent(2); // fails unless the gather gives up on b
      store.release();
      assert.equal(await again, 'a');
      assert.deepEqual(store.sent, [['a', 'b'], ['a']]);
    });

    it('never holds a lone caller back', async () => {
      // Were a lone request gathered for, its next list would wait a minute: listsSent fails.
      const store = heldStore(60_000);
      for (let n = 1; n <= 3; n++) {
        const answer = store.ask('alone');
        await store.listsSent(n);
        store.release();
        await answer;
        await nextTurn();
      }
      assert.deepEqual(store.sent, [['alone'], ['alone'], ['alone']]);
    });
  });
});
