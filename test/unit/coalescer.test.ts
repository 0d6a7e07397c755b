// The service's request coalescer: lists of distinct keys, answers in order, failures isolated.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Coalescer } from '../../src/runtime/coalescer.js';

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
    /** A store whose statements take a few ms, so callers arrive while one is in flight. */
    function slowStore(gatherMs: number) {
      const sent: string[][] = [];
      const roundTrip = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));
      const coalescer = new Coalescer<Req, string>({
        one: async (r) => {
          sent.push([r.key]);
          await roundTrip();
          return r.key;
        },
        many: async (rs) => {
          sent.push(rs.map((r) => r.key));
          await roundTrip();
          return rs.map((r) => r.key);
        },
        key: (r) => r.key,
        gatherMs,
      });
      return { coalescer, sent };
    }

    /** A caller that asks again 1 ms after each answer (its own round trip), `times` times. */
    async function client(coalescer: Coalescer<Req, string>, key: string, times: number) {
      for (let n = 0; n < times; n++) {
        if (n > 0) await new Promise((resolve) => setTimeout(resolve, 1));
        assert.equal(await coalescer.run({ key, n }), key);
      }
    }

    it('merges callers that take turns into one list instead of alternating halves', async () => {
      const { coalescer, sent } = slowStore(1_000);
      // c0 asks first and goes alone; c1-c3 arrive while it is in flight: two cohorts.
      const first = client(coalescer, 'c0', 5);
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([first, ...['c1', 'c2', 'c3'].map((key) => client(coalescer, key, 5))]);
      // Without gathering the lists alternate [c0] and [c1, c2, c3] to the end.
      assert.deepEqual(
        sent.map((list) => list.length),
        [1, 3, 4, 4, 4, 4],
      );
    });

    it(
      'sends what it has once gatherMs has passed when a caller does not come back',
      { timeout: 10_000 },
      async () => {
        const { coalescer, sent } = slowStore(20);
        await Promise.all([client(coalescer, 'a', 2), client(coalescer, 'b', 1)]);
        assert.deepEqual(sent, [['a', 'b'], ['a']]);
      },
    );

    it('never holds a lone caller back', { timeout: 10_000 }, async () => {
      // Were a lone request gathered for, this would wait a minute per call and time out.
      const { coalescer, sent } = slowStore(60_000);
      await client(coalescer, 'alone', 3);
      assert.deepEqual(sent, [['alone'], ['alone'], ['alone']]);
    });
  });
});
