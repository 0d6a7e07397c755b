/**
 * The instrumented engine (src/engine/instrumented-engine.ts) on the real PostgreSQL engine and
 * on the memory engine: every call through a Leasehold is timed and reported with its outcome
 * and error code, the in-library aggregate counts it, a listener's bug breaks nothing, and
 * while nobody listens the wrapper has no operation of its own (a call is the engine's own).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isLeaseholdError } from '../../src/core/errors.js';
import type { Engine } from '../../src/engine/engine.js';
import { ENGINE_OPERATIONS } from '../../src/engine/families.js';
import {
  ENGINE_CALLS,
  instrumentEngine,
  type EngineCallEvent,
} from '../../src/engine/instrumented-engine.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

type WithEngine = (name: string, fn: (engine: Engine) => Promise<void>) => Promise<void>;

const ENGINES: [string, WithEngine][] = [
  [
    'postgres',
    (name, fn) => withSchema(`instrumented ${name}`, async (schema) => fn(await schema.engine())),
  ],
  [
    'memory',
    async (_name, fn) => {
      const engine = new MemoryEngine();
      try {
        await fn(engine);
      } finally {
        await engine.close();
      }
    },
  ],
];

/** The operations the wrapper has as its own properties (none while nobody listens). */
function ownOperations(engine: Engine): string[] {
  return ENGINE_OPERATIONS.filter((name) => Object.hasOwn(engine, name));
}

for (const [engineName, withEngine] of ENGINES) {
  describe(`instrumented ${engineName} engine`, () => {
    it('reports each call through the facade with its operation, duration and outcome', () =>
      withEngine('facade', async (engine) => {
        const lh = Leasehold.fromEngine(engine);
        const events: EngineCallEvent[] = [];
        const stop = lh.on('engine', (e) => events.push(e));

        const lease = await lh.leases.acquire('report', { holder: 'a', ttl: 60 });
        assert.ok(lease);
        assert.equal(await lh.leases.acquire('report', { holder: 'b', ttl: 60 }), null);
        await lh.fence('ledger').check(5);
        await assert.rejects(lh.fence('ledger').check(4), (e: unknown) =>
          isLeaseholdError(e, 'stale_token'),
        );
        stop();
        await lh.leases.release(lease); // after stop: not reported

        // A single acquire goes out as leaseAcquire or, coalesced, as leaseAcquireMany.
        const acquire = (op: string): string => (op === 'leaseAcquireMany' ? 'leaseAcquire' : op);
        assert.deepEqual(
          events.map((e) => [acquire(e.operation), e.outcome, e.errorCode]),
          [
            ['leaseAcquire', 'ok', null],
            ['leaseAcquire', 'ok', null],
            ['fenceCheck', 'ok', null],
            ['fenceCheck', 'error', 'stale_token'],
          ],
        );
        for (const e of events) {
          assert.equal(e.engine, engineName);
          assert.ok(Number.isFinite(e.durationMs) && e.durationMs >= 0, `${e.durationMs}`);
        }
      }));

    it('counts calls, errors by code and durations per operation in the aggregate', () =>
      withEngine('aggregate', async (engine) => {
        const lh = Leasehold.fromEngine(engine);
        const metrics = lh.engineMetrics();
        assert.equal(lh.engineMetrics(), metrics, 'one aggregate per Leasehold');
        for (let i = 1; i <= 3; i++) await lh.engine.fenceCheck({ scope: 's', token: i * 10 });
        await assert.rejects(lh.engine.fenceCheck({ scope: 's', token: 1 }));
        await lh.engine.fenceGet({ scope: 's' });

        const { operations } = metrics.snapshot();
        assert.deepEqual(
          operations.map((o) => o.operation),
          ['fenceCheck', 'fenceGet'],
        );
        const check = operations[0]!;
        assert.equal(check.calls, 4);
        assert.equal(check.errors, 1);
        assert.deepEqual(check.errorsByCode, { stale_token: 1 });
        assert.ok(check.totalMs >= 0);
        const last = check.buckets[check.buckets.length - 1]!;
        assert.deepEqual(last, { leMs: Infinity, count: 4 }, 'the last bucket counts every call');
        for (let i = 1; i < check.buckets.length; i++)
          assert.ok(check.buckets[i]!.count >= check.buckets[i - 1]!.count, 'cumulative');
        assert.equal(operations[1]!.calls, 1);
      }));

    it('adds no operation of its own while nobody listens, and reads as the engine it wraps', () =>
      withEngine('quiet', async (engine) => {
        const lh = Leasehold.fromEngine(engine);
        assert.deepEqual(ownOperations(lh.engine), [], 'quiet: calls reach the engine directly');
        assert.ok(lh.engine instanceof (engine.constructor as new () => Engine));
        if (engine instanceof PostgresEngine) {
          assert.ok(lh.engine instanceof PostgresEngine);
          assert.equal((lh.engine as PostgresEngine).pool, engine.pool);
        }
        assert.equal(lh.engine.name, engine.name);
        assert.equal(lh.engine.capabilities, engine.capabilities);

        const stop = lh.on('engine', () => {});
        assert.deepEqual(ownOperations(lh.engine), [...ENGINE_OPERATIONS], 'every operation timed');
        assert.equal(instrumentEngine(lh.engine), lh.engine, 'wrapping twice: the same wrapper');
        stop();
        // Forwarders now (no delete: the wrapper keeps its fast shape); they still reach the
        // engine's current method, so a later replacement of it is seen.
        let seen = 0;
        const original = engine.leaseGet.bind(engine);
        engine.leaseGet = (p) => {
          seen++;
          return original(p);
        };
        assert.equal(await lh.engine.leaseGet({ resource: 'nothing' }), null);
        assert.equal(seen, 1);
      }));

    it('carries the params of each call, typed by its operation', () =>
      withEngine('params', async (engine) => {
        const lh = Leasehold.fromEngine(engine);
        const claimed: string[][] = [];
        lh.on('engine', (call) => {
          if (call.operation === 'jobClaimBatch') claimed.push([...call.params.queues]);
        });
        await lh.queue('billing').enqueue({ invoice: 1 });
        const jobs = await lh.engine.jobClaimBatch({
          queues: ['billing', 'mail'],
          workerId: 'w1',
          limit: 1,
          leaseTtlMs: 60_000,
        });
        assert.equal(jobs.length, 1);
        assert.deepEqual(claimed, [['billing', 'mail']]);
      }));

    it('reports a rejected call without changing its rejection, and survives a throwing listener', () =>
      withEngine('errors', async (engine) => {
        const lh = Leasehold.fromEngine(engine);
        const events: EngineCallEvent[] = [];
        lh.on('engine', () => {
          throw new Error('a listener bug');
        });
        lh.on('engine', (e) => events.push(e));
        const lease = await lh.engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: 60_000 });
        assert.ok(lease.acquired);
        await lh.engine.controlSet({ name: 'c', value: { on: true }, updatedBy: 'x' });
        assert.deepEqual((await lh.engine.controlGet({ name: 'c' }))?.value, { on: true });
        assert.throws(
          () => lh.on('nope' as 'engine', () => {}),
          (e: unknown) => isLeaseholdError(e, 'invalid_argument'),
        );
        await lh.close();
        await assert.rejects(lh.engine.leaseGet({ resource: 'r' }));
        assert.deepEqual(
          events.map((e) => [e.operation, e.outcome]),
          [
            ['leaseAcquire', 'ok'],
            ['controlSet', 'ok'],
            ['controlGet', 'ok'],
            ['close', 'ok'],
            ['leaseGet', 'error'],
          ],
        );
        assert.ok(events[4]!.errorCode, 'a failed call carries an error code');
      }));
  });
}

describe('instrumented engine', () => {
  it('covers every call of the seam: each family operation and the basics', () => {
    assert.deepEqual(
      [...ENGINE_CALLS].sort(),
      [...ENGINE_OPERATIONS, 'migrate', 'now', 'close'].sort(),
    );
    assert.equal(new Set(ENGINE_OPERATIONS).size, ENGINE_OPERATIONS.length, 'each once');
    const engine = new MemoryEngine();
    for (const name of ENGINE_OPERATIONS)
      assert.equal(typeof engine[name], 'function', `${name} is composed onto the engine`);
  });
});
