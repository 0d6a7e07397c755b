/**
 * Bad input never reaches an engine: every entry point of the lease API rejects it with an
 * InvalidArgumentError (code `invalid_argument`) whose message starts with the rejected field,
 * and nothing is written. Each case runs on the memory engine and on PostgreSQL, so both
 * engines are guaranteed to see the same, already validated, input.
 */
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { InvalidArgumentError } from '../../src/core/errors.js';
import type { Lease } from '../../src/core/types.js';
import { LIMITS } from '../../src/core/validate.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import type { AcquireOptions, LeaseTerm } from '../../src/leases/lease-manager.js';
import { closeTestDatabase, testDatabaseUrl, withSchema } from '../support/database.js';

after(closeTestDatabase);

/** A value of the wrong type, smuggled past the compiler as a JavaScript caller would. */
const bad = (value: unknown): never => value as never;

const GOOD: AcquireOptions = { holder: 'worker-1', ttl: '30s' };
const HOUR = 60 * 60 * 1_000;

interface Case {
  readonly name: string;
  readonly field: string;
  readonly call: (lh: Leasehold) => Promise<unknown>;
}

/** Bad resources and holders: both go through the same name rules. */
const BAD_NAMES: readonly [string, unknown][] = [
  ['is empty', ''],
  [`has ${LIMITS.nameMaxLength + 1} characters`, 'n'.repeat(LIMITS.nameMaxLength + 1)],
  ['contains a NUL character', 'a\u0000b'],
  ['contains a newline', 'a\nb'],
  ['contains a tab', 'a\tb'],
  ['contains an escape character', '\u001b[31mred'],
  ['contains DEL', 'a\u007f'],
  ['contains a C1 control character', 'a\u009bb'],
  ['contains a lone surrogate', 'a\ud800b'],
  ['is a number', 42],
  ['is null', null],
  ['is undefined', undefined],
  ['is an object', { name: 'r' }],
  ['is an array', ['r']],
];

const BAD_TTLS: readonly [string, unknown][] = [
  ['is 0', 0],
  ['is negative', -1_000],
  ['is below the minimum', LIMITS.ttlMinMs - 1],
  ['is beyond LIMITS.ttlMaxMs', LIMITS.ttlMaxMs + 1],
  ['is a string beyond LIMITS.ttlMaxMs', '2d'],
  ['is NaN', Number.NaN],
  ['is Infinity', Number.POSITIVE_INFINITY],
  ['is not a duration string', 'soon'],
  ['is an empty string', ''],
  ['is a negative duration string', '-5s'],
  ['is a boolean', true],
  ['is null', null],
  ['is missing', undefined],
];

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
}

const BAD_METADATA: readonly [string, unknown][] = [
  ['is a string', 'text'],
  ['is a number', 7],
  ['is an array', [1, 2]],
  ['is null', null],
  ['is a Date (which serialises to a string)', new Date('2030-01-01T00:00:00Z')],
  [
    `is larger than ${LIMITS.metadataMaxBytes} bytes`,
    { blob: 'x'.repeat(LIMITS.metadataMaxBytes) },
  ],
  ['is circular', circular()],
  ['holds a bigint', { n: 10n }],
  ['holds a NUL character in a string', { note: 'a\u0000b' }],
  ['holds a NUL character in a key', { 'a\u0000b': 1 }],
  ['holds a lone surrogate', { note: 'a\udfffb' }],
];

const ACQUIRE_CASES: Case[] = [
  ...BAD_NAMES.map(([what, resource]) => ({
    name: `rejects an acquire whose resource ${what}`,
    field: 'resource',
    call: (lh: Leasehold) => lh.leases.acquire(bad(resource), GOOD),
  })),
  ...BAD_NAMES.map(([what, holder]) => ({
    name: `rejects an acquire whose holder ${what}`,
    field: 'holder',
    call: (lh: Leasehold) => lh.leases.acquire('r', { ...GOOD, holder: bad(holder) }),
  })),
  ...BAD_TTLS.map(([what, ttl]) => ({
    name: `rejects an acquire whose ttl ${what}`,
    field: 'ttl',
    call: (lh: Leasehold) => lh.leases.acquire('r', { ...GOOD, ttl: bad(ttl) }),
  })),
  ...BAD_METADATA.map(([what, metadata]) => ({
    name: `rejects an acquire whose metadata ${what}`,
    field: 'metadata',
    call: (lh: Leasehold) => lh.leases.acquire('r', { ...GOOD, metadata: bad(metadata) }),
  })),
  {
    name: 'rejects an acquire without options',
    field: 'options',
    call: (lh) => lh.leases.acquire('r', bad(null)),
  },
  {
    name: 'rejects tryAcquire with the same rules as acquire',
    field: 'ttl',
    call: (lh) => lh.leases.tryAcquire('r', { ...GOOD, ttl: 'forever' }),
  },
  {
    name: 'rejects hold() whose margin is not shorter than the ttl',
    field: 'margin',
    call: (lh) => lh.leases.hold('r', { ...GOOD, ttl: 1_000, margin: 1_000 }),
  },
  {
    name: 'rejects hold() whose renewEvery would let the lease lapse between renewals',
    field: 'renewEvery',
    call: (lh) => lh.leases.hold('r', { ...GOOD, ttl: 1_000, margin: 300, renewEvery: 700 }),
  },
  {
    name: 'rejects hold() whose renewEvery is not a duration',
    field: 'renewEvery',
    call: (lh) => lh.leases.hold('r', { ...GOOD, renewEvery: bad('often') }),
  },
  {
    name: 'rejects withLease() with a bad resource without running the work',
    field: 'resource',
    call: (lh) =>
      lh.leases.withLease('', GOOD, () => {
        throw new Error('the work must not run');
      }),
  },
  {
    name: 'rejects get() of an empty resource',
    field: 'resource',
    call: (lh) => lh.leases.get(''),
  },
  {
    name: 'rejects getById() of id 0',
    field: 'id',
    call: (lh) => lh.leases.getById(0),
  },
  {
    name: 'rejects list() with an unknown state',
    field: 'state',
    call: (lh) => lh.leases.list({ state: bad('alive') }),
  },
  {
    name: `rejects list() with a limit above ${LIMITS.listMaxLimit}`,
    field: 'limit',
    call: (lh) => lh.leases.list({ limit: LIMITS.listMaxLimit + 1 }),
  },
  {
    name: 'rejects list() with a negative offset',
    field: 'offset',
    call: (lh) => lh.leases.list({ offset: -1 }),
  },
];

/** Renew and release of a live lease with a bad term: cases built on the lease they target. */
function termCases(lease: Lease): Case[] {
  const term: LeaseTerm = { resource: lease.resource, holder: lease.holder, token: lease.token };
  const badTerms: [string, string, LeaseTerm][] = [
    ['whose token is 0', 'token', { ...term, token: 0 }],
    ['whose token is not an integer', 'token', { ...term, token: 1.5 }],
    ['whose token is a string', 'token', { ...term, token: bad(String(lease.token)) }],
    ['whose token is missing', 'token', { ...term, token: bad(undefined) }],
    ['whose resource is empty', 'resource', { ...term, resource: '' }],
    [
      `whose holder has ${LIMITS.nameMaxLength + 1} characters`,
      'holder',
      { ...term, holder: 'h'.repeat(LIMITS.nameMaxLength + 1) },
    ],
    ['that is null', 'lease', bad(null)],
  ];
  return [
    ...badTerms.map(([what, field, t]) => ({
      name: `rejects a renew ${what}`,
      field,
      call: (lh: Leasehold) => lh.leases.renew(t, { ttl: '30s' }),
    })),
    ...badTerms.map(([what, field, t]) => ({
      name: `rejects a release ${what}`,
      field,
      call: (lh: Leasehold) => lh.leases.release(t),
    })),
    ...BAD_TTLS.filter(([what]) => what !== 'is missing').map(([what, ttl]) => ({
      name: `rejects a renew whose ttl ${what}`,
      field: 'ttl',
      call: (lh: Leasehold) => lh.leases.renew(term, { ttl: bad(ttl) }),
    })),
  ];
}

async function expectInvalid(field: string, call: () => Promise<unknown>): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof InvalidArgumentError, `expected InvalidArgumentError, got ${error}`);
    assert.equal(error.code, 'invalid_argument');
    assert.equal(error.field, field);
    assert.ok(error.message.startsWith(`${field}: `), `message names the field: ${error.message}`);
    return true;
  });
}

/** Every case as a subtest, each checking that the stored leases did not change. */
async function runCases(t: TestContext, lh: Leasehold, cases: Case[]): Promise<void> {
  for (const c of cases) {
    await t.test(c.name, async () => {
      const before = await lh.leases.list({ state: 'all' });
      await expectInvalid(c.field, () => c.call(lh));
      assert.deepEqual(await lh.leases.list({ state: 'all' }), before, 'nothing was written');
    });
  }
}

async function checkEverything(t: TestContext, lh: Leasehold): Promise<void> {
  await runCases(t, lh, ACQUIRE_CASES);
  assert.deepEqual(await lh.leases.list({ state: 'all' }), [], 'no lease was ever written');

  const lease = await lh.leases.acquire('held', { holder: 'owner', ttl: HOUR });
  assert.ok(lease);
  const cases = termCases(lease);
  await runCases(t, lh, cases);
  assert.deepEqual(await lh.leases.list({ state: 'all' }), [lease], 'the live lease is untouched');
  t.diagnostic(`${ACQUIRE_CASES.length + cases.length} bad inputs rejected`);
}

describe('lease input validation', () => {
  it('rejects every bad input on the memory engine, naming the field and writing nothing', async (t) => {
    const lh = Leasehold.memory();
    try {
      await checkEverything(t, lh);
    } finally {
      await lh.close();
    }
  });

  it('rejects every bad input on PostgreSQL, naming the field and writing nothing', async (t) => {
    await withSchema('lease validation', async (schema) => {
      await checkEverything(t, Leasehold.fromEngine(await schema.engine()));
    });
  });

  it('accepts the limits themselves: a 256-character name, emoji, the longest ttl and 16 KiB of metadata', async () => {
    await withSchema('lease validation limits', async (schema) => {
      for (const lh of [Leasehold.memory(), Leasehold.fromEngine(await schema.engine())]) {
        const resource = 'r'.repeat(LIMITS.nameMaxLength);
        const metadata = { blob: 'x'.repeat(LIMITS.metadataMaxBytes - '{"blob":""}'.length) };
        const lease = await lh.leases.acquire(resource, {
          holder: 'holder 🚀 ünïcode',
          ttl: LIMITS.ttlMaxMs,
          metadata,
        });
        assert.equal(lease?.resource, resource);
        assert.equal(lease?.holder, 'holder 🚀 ünïcode');
        assert.equal(lease?.ttlMs, LIMITS.ttlMaxMs);
        assert.deepEqual(lease?.metadata, metadata);
        await lh.close();
      }
    });
  });
});

describe('schema name validation', () => {
  const BAD_SCHEMAS: [string, string][] = [
    ['with upper case and a dash', 'Bad-Name'],
    ['starting with a digit', '1abc'],
    ['of 64 characters', 's'.repeat(64)],
    ['that is empty', ''],
    ['with a space', 'my schema'],
    ['with a quote', 'x"; DROP SCHEMA public; --'],
    ['with non-ASCII letters', 'schéma'],
  ];

  it('rejects a bad schema name before connecting, naming the field', async (t) => {
    const url = await testDatabaseUrl();
    for (const [what, schema] of BAD_SCHEMAS) {
      await t.test(`rejects a schema name ${what}`, async () => {
        await expectInvalid(
          'schema',
          async () => new PostgresEngine({ connectionString: url, schema }),
        );
        await expectInvalid('schema', () => Leasehold.connect({ connectionString: url, schema }));
      });
    }
  });

  it('accepts a lower-case schema name of 63 characters', async () => {
    const url = await testDatabaseUrl();
    const engine = new PostgresEngine({ connectionString: url, schema: 's'.repeat(63) });
    assert.equal(engine.schema, 's'.repeat(63));
    await engine.close();
  });
});
