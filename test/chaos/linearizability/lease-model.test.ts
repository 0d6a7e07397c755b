// The lease model and the search on hand-written histories that must pass and must fail, the
// broken variants that turn them around, and generated histories (correct, then with one bug).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateLeaseHistory } from './generate.js';
import {
  leaseModel,
  type LeaseInput,
  type LeaseOperation,
  type LeaseOutput,
} from './lease-model.js';
import { checkOperations, formatFailure } from './search.js';

const op = (
  client: string,
  call: number,
  ret: number,
  input: LeaseInput,
  output?: LeaseOutput,
): LeaseOperation =>
  output === undefined
    ? { client, call, ret: Infinity, input, unknown: true }
    : { client, call, ret, input, output };

const acquire = (holder: string, ttl = 100): LeaseInput => ({
  kind: 'acquire',
  resource: 'r',
  holder,
  ttl,
});
const renew = (holder: string, token: number, ttl = 100): LeaseInput => ({
  kind: 'renew',
  resource: 'r',
  holder,
  token,
  ttl,
});
const release = (holder: string, token: number): LeaseInput => ({
  kind: 'release',
  resource: 'r',
  holder,
  token,
});
const read: LeaseInput = { kind: 'read', resource: 'r' };

describe('lease model', () => {
  it('accepts a concurrent pair in either order', () => {
    // b's call comes first but a acquired: a's acquire must be linearized before b's busy.
    const history = [
      op('a', 1, 10, acquire('a'), { kind: 'acquired', token: 1, expiresAt: 105, dbNow: 5 }),
      op('b', 0, 9, acquire('b'), { kind: 'busy', dbNow: 6 }),
    ];
    assert.equal(checkOperations(leaseModel(), history).verdict, 'ok');
    const swapped = [
      op('a', 1, 10, acquire('a'), { kind: 'busy', dbNow: 6 }),
      op('b', 0, 9, acquire('b'), { kind: 'acquired', token: 1, expiresAt: 105, dbNow: 5 }),
    ];
    assert.equal(checkOperations(leaseModel(), swapped).verdict, 'ok');
  });

  it('refuses two holders at once, and reports the window', () => {
    const history = [
      op('a', 0, 1, acquire('a'), { kind: 'acquired', token: 1, expiresAt: 100, dbNow: 0 }),
      op('b', 2, 3, acquire('b'), { kind: 'acquired', token: 2, expiresAt: 110, dbNow: 10 }),
    ];
    const result = checkOperations(leaseModel(), history);
    assert.equal(result.verdict, 'illegal');
    const part = result.partitions[0]!;
    assert.ok(part.verdict === 'illegal');
    assert.deepEqual(
      part.failure.longestPrefix.map((p) => p.id),
      [0],
    );
    assert.equal(part.failure.blocking.id, 1);
    assert.deepEqual([part.failure.from, part.failure.to], [2, 3]);
    assert.match(formatFailure(part.failure), /acquire\(b, ttl 100\)/);
  });

  it('refuses a stale renew accepted after another holder acquired', () => {
    const history = [
      op('a', 0, 1, acquire('a'), { kind: 'acquired', token: 1, expiresAt: 100, dbNow: 0 }),
      op('b', 2, 3, acquire('b'), { kind: 'acquired', token: 2, expiresAt: 250, dbNow: 150 }),
      op('a', 4, 5, renew('a', 1), { kind: 'renewed', expiresAt: 260, dbNow: 160 }),
    ];
    assert.equal(checkOperations(leaseModel(), history).verdict, 'illegal');
  });

  it('refuses a renew after expiry; the variant without the expiry check accepts it', () => {
    const history = [
      op('a', 0, 1, acquire('a'), { kind: 'acquired', token: 1, expiresAt: 100, dbNow: 0 }),
      op('a', 4, 5, renew('a', 1), { kind: 'renewed', expiresAt: 250, dbNow: 150 }),
    ];
    assert.equal(checkOperations(leaseModel(), history).verdict, 'illegal');
    const broken = leaseModel({ renewWithoutExpiryCheck: true });
    assert.equal(checkOperations(broken, history).verdict, 'ok');
  });

  it('refuses a token reused after a crash; the variant that lets tokens repeat accepts it', () => {
    const history = [
      op('a', 0, 1, acquire('a'), { kind: 'acquired', token: 5, expiresAt: 100, dbNow: 0 }),
      // (the database crashes and comes back having lost its token sequence)
      op('b', 10, 11, acquire('b'), { kind: 'acquired', token: 5, expiresAt: 300, dbNow: 200 }),
    ];
    assert.equal(checkOperations(leaseModel(), history).verdict, 'illegal');
    assert.equal(checkOperations(leaseModel({ tokensMayRepeat: true }), history).verdict, 'ok');
  });

  it('accepts the same token again for the same live holder (the idempotent re-acquire)', () => {
    const history = [
      op('a', 0, 1, acquire('a'), { kind: 'acquired', token: 3, expiresAt: 100, dbNow: 0 }),
      op('a', 2, 3, acquire('a'), { kind: 'acquired', token: 3, expiresAt: 150, dbNow: 50 }),
      op('a', 4, 5, release('a', 3), { kind: 'released', dbNow: 60 }),
      op('b', 6, 7, read, { kind: 'none', dbNow: 70 }),
    ];
    assert.equal(checkOperations(leaseModel(), history).verdict, 'ok');
  });

  it('lets an unknown-outcome acquire explain a later state, and only then', () => {
    const explained = [
      op('a', 0, Infinity, acquire('a')),
      op('b', 10, 11, read, { kind: 'held', holder: 'a', token: 1, dbNow: 10 }),
      op('b', 12, 13, acquire('b'), { kind: 'busy', dbNow: 12 }),
    ];
    assert.equal(checkOperations(leaseModel(), explained).verdict, 'ok');
    // The same read without the acquire that may have happened.
    assert.equal(checkOperations(leaseModel(), explained.slice(1)).verdict, 'illegal');
    // An unknown acquire that did not take effect.
    const noEffect = [
      op('a', 0, Infinity, acquire('a')),
      op('b', 10, 11, acquire('b'), { kind: 'acquired', token: 1, expiresAt: 110, dbNow: 10 }),
    ];
    assert.equal(checkOperations(leaseModel(), noEffect).verdict, 'ok');
    // Its call came after the read: it cannot explain it.
    const tooLate = [
      op('b', 10, 11, read, { kind: 'held', holder: 'a', token: 1, dbNow: 10 }),
      op('a', 12, Infinity, acquire('a')),
    ];
    assert.equal(checkOperations(leaseModel(), tooLate).verdict, 'illegal');
  });

  it('judges a refusal without its database time both ways', () => {
    const history = [
      op('a', 0, 1, acquire('a'), { kind: 'acquired', token: 1, expiresAt: 100, dbNow: 0 }),
      op('b', 2, 3, acquire('b'), { kind: 'busy' }),
      op('a', 4, 5, renew('a', 1), { kind: 'lost' }),
      op('b', 6, 7, acquire('b'), { kind: 'acquired', token: 2, expiresAt: 300, dbNow: 200 }),
    ];
    assert.equal(checkOperations(leaseModel(), history).verdict, 'ok');
    // Still wrong: "lost" for the live holder, then its renewal accepted on time.
    const wrong = [
      ...history.slice(0, 3),
      op('a', 6, 7, renew('a', 1), { kind: 'renewed', expiresAt: 190, dbNow: 90 }),
    ];
    assert.equal(checkOperations(leaseModel(), wrong).verdict, 'illegal');
  });

  it('checks each resource alone', () => {
    const other = (input: LeaseInput): LeaseInput => ({ ...input, resource: 's' });
    const history = [
      op('a', 0, 1, acquire('a'), { kind: 'acquired', token: 1, expiresAt: 100, dbNow: 0 }),
      op('b', 2, 3, other(acquire('b')), { kind: 'acquired', token: 1, expiresAt: 100, dbNow: 2 }),
    ];
    const result = checkOperations(leaseModel(), history);
    assert.equal(result.verdict, 'ok');
    assert.equal(result.partitions.length, 2);
  });

  it('says unknown, never ok, when the budget runs out', () => {
    const history = generateLeaseHistory({
      seed: 7,
      operations: 200,
      resources: 1,
      clientsPerResource: 4,
      spread: 4,
      unknownShare: 0.05,
    });
    const result = checkOperations(leaseModel(), history, { maxSteps: 10 });
    assert.equal(result.verdict, 'unknown');
    const part = result.partitions[0]!;
    assert.ok(part.verdict === 'unknown');
    assert.match(part.reason, /more than 10 search steps/);
  });
});

describe('generated lease histories', () => {
  const options = {
    operations: 400,
    resources: 2,
    clientsPerResource: 4,
    spread: 3,
    unknownShare: 0.05,
  };

  it('a correct execution with overlapping intervals is linearizable', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const result = checkOperations(leaseModel(), generateLeaseHistory({ ...options, seed }));
      assert.equal(result.verdict, 'ok', `seed ${seed}`);
    }
  });

  it('one repeated token handed to another holder makes it fail', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const history = generateLeaseHistory({ ...options, seed });
      // The last acquire that got a new token: give it an earlier holder's token instead.
      const acquired = history
        .map((o, i) => ({ o, i }))
        .filter(({ o }) => o.output?.kind === 'acquired' && o.input.resource === 'r0');
      let injected = false;
      for (let k = acquired.length - 1; k > 0 && !injected; k--) {
        const later = acquired[k]!;
        const earlier = acquired
          .slice(0, k)
          .reverse()
          .find(({ o }) => o.client !== later.o.client);
        const out = later.o.output;
        const before = earlier?.o.output;
        if (!earlier || out?.kind !== 'acquired' || before?.kind !== 'acquired') continue;
        if (before.token === out.token) continue;
        history[later.i] = { ...later.o, output: { ...out, token: before.token } };
        injected = true;
      }
      assert.ok(injected, `seed ${seed}: nothing to inject`);
      const result = checkOperations(leaseModel(), history);
      assert.equal(result.verdict, 'illegal', `seed ${seed}`);
    }
  });

  it('one renew answered "lost" turned into "renewed" makes it fail', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const history = generateLeaseHistory({ ...options, seed });
      const i = history.findLastIndex(
        (o) => o.input.kind === 'renew' && o.input.token > 0 && o.output?.kind === 'lost',
      );
      assert.ok(i >= 0, `seed ${seed}: nothing to inject`);
      const o = history[i]!;
      const dbNow = o.output!.dbNow!;
      history[i] = { ...o, output: { kind: 'renewed', expiresAt: dbNow + 100, dbNow } };
      const result = checkOperations(leaseModel(), history);
      assert.equal(result.verdict, 'illegal', `seed ${seed}`);
    }
  });

  it('checks 5,000 operations over 20 resources quickly', () => {
    const history = generateLeaseHistory({
      seed: 42,
      operations: 5000,
      resources: 20,
      clientsPerResource: 5,
      spread: 20,
      unknownShare: 0.05,
    });
    const started = performance.now();
    const result = checkOperations(leaseModel(), history);
    const millis = performance.now() - started;
    const steps = result.partitions.reduce((n, p) => n + p.steps, 0);
    console.log(
      `5,000 operations, 20 resources: ${result.verdict} in ${millis.toFixed(0)} ms, ${steps} steps`,
    );
    assert.equal(result.verdict, 'ok');
    assert.ok(millis < 20_000, `took ${millis} ms`);
  });
});
