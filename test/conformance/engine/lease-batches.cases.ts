import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Lease } from '../../../src/core/types.js';
import type {
  Engine,
  LeaseAcquireParams,
  LeaseAcquireResult,
  LeaseReleaseParams,
  LeaseRenewParams,
} from '../../../src/engine/engine.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 10_000;

/**
 * One step of a script: a list of calls of one kind, sent either one by one or as one
 * many-lease call. `r` names a resource; each run prefixes it, so both runs start from nothing.
 */
type Step =
  | { kind: 'acquire'; calls: (Omit<LeaseAcquireParams, 'resource'> & { r: string })[] }
  | { kind: 'renew'; calls: (Omit<LeaseRenewParams, 'resource'> & { r: string })[] }
  | { kind: 'release'; calls: (Omit<LeaseReleaseParams, 'resource'> & { r: string })[] }
  | { kind: 'advance'; ms: number };

const SCRIPT: Step[] = [
  {
    kind: 'acquire',
    calls: [
      { r: 'b', holder: 'h1', ttlMs: TTL, metadata: { n: 1 } },
      { r: 'a', holder: 'h1', ttlMs: TTL },
      { r: 'a', holder: 'h2', ttlMs: TTL }, // refused: h1 holds it from the call before
      { r: 'c', holder: 'h3', ttlMs: 2_000 },
      { r: 'a', holder: 'h1', ttlMs: 3 * TTL }, // the live holder again: same token, extended
    ],
  },
  { kind: 'advance', ms: 2_500 },
  {
    kind: 'renew',
    calls: [
      { r: 'a', holder: 'h1', token: 1, ttlMs: TTL },
      { r: 'c', holder: 'h3', token: 1, ttlMs: TTL }, // expired: refused
      { r: 'b', holder: 'h1', token: 2, ttlMs: TTL }, // wrong token: refused
      { r: 'b', holder: 'h1', ttlMs: TTL }, // no token (seed-000 clients): holder guards it
      { r: 'zz', holder: 'h1', token: 1, ttlMs: TTL }, // never leased
      { r: 'a', holder: 'h1', token: 1, ttlMs: 2 * TTL },
    ],
  },
  {
    kind: 'acquire',
    calls: [
      { r: 'c', holder: 'h2', ttlMs: TTL }, // expired: a new term, token 2
      { r: 'b', holder: 'h2', ttlMs: TTL }, // live: refused, current is h1's
    ],
  },
  {
    kind: 'release',
    calls: [
      { r: 'a', holder: 'h2', token: 1 }, // not the holder
      { r: 'a', holder: 'h1', token: 1 },
      { r: 'a', holder: 'h1', token: 1 }, // already released
      { r: 'c', holder: 'h2' },
    ],
  },
  {
    kind: 'acquire',
    calls: [
      { r: 'a', holder: 'h2', ttlMs: TTL }, // released: token 2
      { r: 'c', holder: 'h3', ttlMs: TTL }, // released: token 3
      { r: 'c', holder: 'h1', ttlMs: TTL }, // refused: h3 took it in this same list
    ],
  },
];

type Answer = LeaseAcquireResult | Lease | null;

async function runScript(
  engine: Engine,
  advance: (ms: number) => Promise<void>,
  prefix: string,
  batched: boolean,
): Promise<Answer[][]> {
  const answers: Answer[][] = [];
  for (const step of SCRIPT) {
    if (step.kind === 'advance') {
      await advance(step.ms);
      continue;
    }
    const params = step.calls.map(({ r, ...rest }) => ({ ...rest, resource: prefix + r }));
    if (step.kind === 'acquire') {
      const ps = params as LeaseAcquireParams[];
      answers.push(
        batched ? await engine.leaseAcquireMany(ps) : await each(ps, engine.leaseAcquire),
      );
    } else if (step.kind === 'renew') {
      const ps = params as LeaseRenewParams[];
      answers.push(batched ? await engine.leaseRenewMany(ps) : await each(ps, engine.leaseRenew));
    } else {
      const ps = params as LeaseReleaseParams[];
      answers.push(
        batched ? await engine.leaseReleaseMany(ps) : await each(ps, engine.leaseRelease),
      );
    }
  }
  return answers;
}

async function each<P, R>(ps: P[], one: (p: P) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const p of ps) out.push(await one(p));
  return out;
}

/** An answer without what differs between the two runs (row ids, the resource prefix). */
function comparable(answer: Answer, prefix: string): unknown {
  if (answer === null) return null;
  if ('acquired' in answer)
    return answer.acquired
      ? { acquired: true, lease: comparable(answer.lease, prefix) }
      : { acquired: false, current: comparable(answer.current, prefix) };
  const { id: _id, resource, ...rest } = answer;
  return { resource: resource.slice(prefix.length), ...rest };
}

export function leaseBatchEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: many-lease calls`, () => {
    conformanceCase(
      h,
      'answers a many-lease call exactly as the single calls in input order',
      async ({ engine, clock }) => {
        // The clock moves the same way in both runs, so every timestamp lines up.
        const start = clock.now().getTime();
        const single = await runScript(engine, (ms) => clock.advance(ms), 'one:', false);
        await clock.advance(start + 3_600_000 - clock.now().getTime());
        const batchedStart = clock.now().getTime();
        const batched = await runScript(engine, (ms) => clock.advance(ms), 'many:', true);
        const shift = (answers: Answer[][], prefix: string, from: number): unknown =>
          JSON.parse(
            JSON.stringify(answers.map((step) => step.map((a) => comparable(a, prefix)))),
            (_key, value: unknown) =>
              typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value)
                ? new Date(value).getTime() - from
                : value,
          );
        const expected = shift(single, 'one:', start);
        assert.deepEqual(shift(batched, 'many:', batchedStart), expected);
        // The script means what its comments say (so the comparison cannot pass vacuously).
        const [first, renews, , releases, last] = single as [
          LeaseAcquireResult[],
          (Lease | null)[],
          LeaseAcquireResult[],
          (Lease | null)[],
          LeaseAcquireResult[],
        ];
        assert.deepEqual(
          first.map((a) => a.acquired),
          [true, true, false, true, true],
        );
        assert.deepEqual(
          renews.map((l) => l !== null),
          [true, false, false, true, false, true],
        );
        assert.deepEqual(
          releases.map((l) => l !== null),
          [false, true, false, true],
        );
        assert.deepEqual(
          last.map((a) => (a.acquired ? a.lease.token : `refused:${a.current?.holder}`)),
          [2, 3, 'refused:h3'],
        );
      },
    );

    conformanceCase(h, 'answers an empty list with an empty list', async ({ engine }) => {
      assert.deepEqual(await engine.leaseAcquireMany([]), []);
      assert.deepEqual(await engine.leaseRenewMany([]), []);
      assert.deepEqual(await engine.leaseReleaseMany([]), []);
    });

    conformanceCase(
      h,
      'gives a freed resource to the first of many asking in one list, and refuses the rest',
      async ({ engine }) => {
        const held = await engine.leaseAcquireMany([
          { resource: 'x', holder: 'first', ttlMs: TTL },
        ]);
        assert.ok(held[0]?.acquired);
        const released = await engine.leaseReleaseMany([
          { resource: 'x', holder: 'first', token: held[0].lease.token },
        ]);
        assert.equal(released[0]?.state, 'released');
        const asking = Array.from({ length: 5 }, (_, i) => `h${i}`);
        const answers = await engine.leaseAcquireMany(
          asking.map((holder) => ({ resource: 'x', holder, ttlMs: TTL })),
        );
        assert.deepEqual(
          answers.map((a) => (a.acquired ? a.lease.token : a.current?.holder)),
          [2, 'h0', 'h0', 'h0', 'h0'],
        );
      },
    );
  });
}
