/**
 * Toolkit-level cases for `lh.fence(scope)`: a holder superseded by a newer term is refused
 * with `stale_token`, the current one is accepted, and inside a caller's transaction the check
 * commits or rolls back with it.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { CallerTransaction } from '../../../src/engine/engine.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const stale = (e: unknown): boolean => isLeaseholdError(e, 'stale_token');

export function fenceCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: fences`, () => {
    conformanceCase(
      h,
      'rejects a superseded lease-lock holder with stale_token and accepts the current one',
      async ({ lh, clock }) => {
        const fence = lh.fence('ledger');
        assert.equal(await fence.get(), null);
        const old = lh.locks.lease('ledger', { ttl: 10_000, autoRenew: false });
        const oldToken = await old.lock();
        await fence.check(oldToken);
        // The old holder stalls past its expiry (it ignores its signal) and is superseded.
        await clock.advance(10_000);
        const current = lh.locks.lease('ledger', { ttl: 10_000, autoRenew: false });
        const token = await current.lock();
        assert.ok(token > oldToken);
        await fence.check(token);
        await fence.check(null, token); // an equal token passes: the same holder writing again
        await assert.rejects(fence.check(oldToken), (e: unknown) => {
          assert.ok(isLeaseholdError(e, 'stale_token'));
          assert.equal(e.details.newest, token);
          assert.equal(e.details.scope, 'ledger');
          return true;
        });
        assert.equal(await fence.get(), token);
        await lh.fence('other-scope').check(oldToken); // scopes are independent
      },
    );

    conformanceCase(
      h,
      'rejects a session-lock holder once a later holder wrote through the fence',
      async ({ lh }) => {
        const fence = lh.fence('ledger');
        const first = lh.locks.session('ledger');
        const firstToken = await first.lock();
        await first.unlock();
        const second = lh.locks.session('ledger');
        const secondToken = await second.lock();
        await fence.check(secondToken);
        await assert.rejects(fence.check(firstToken), stale);
        await second.unlock();
      },
      { requires: ['sessionLocks'] },
    );

    conformanceCase(
      h,
      'records a check made in a caller transaction only if that transaction commits',
      async ({ engine, lh }) => {
        assert.ok(engine instanceof PostgresEngine);
        const fence = lh.fence('ledger');
        const client = await engine.pool.connect();
        try {
          await client.query('BEGIN');
          await fence.check(client, 9);
          await client.query('ROLLBACK');
          assert.equal(await fence.get(), null, 'a rolled-back check records nothing');
          await client.query('BEGIN');
          await fence.check(client, 4);
          await client.query('COMMIT');
          assert.equal(await fence.get(), 4);
          await client.query('BEGIN');
          await assert.rejects(fence.check(client, 3), stale);
          await client.query('ROLLBACK');
          assert.equal(await fence.get(), 4);
        } finally {
          client.release();
        }
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );

    conformanceCase(
      h,
      'checks without a transaction everywhere, and refuses one where callerTransactions is missing',
      async ({ engine, lh }) => {
        const fence = lh.fence('ledger');
        await fence.check(undefined, 2);
        await fence.check(2);
        assert.equal(await fence.get(), 2);
        if (engine.capabilities.callerTransactions) return; // joined a real one in the case above
        const tx: CallerTransaction = { query: async () => ({ rows: [] }) };
        await assert.rejects(fence.check(tx, 3), (e: unknown) =>
          isLeaseholdError(e, 'unsupported'),
        );
        assert.equal(await fence.get(), 2);
      },
    );

    conformanceCase(
      h,
      'rejects a bad scope, token or transaction with invalid_argument naming the field',
      async ({ lh }) => {
        const field = (name: string) => (e: unknown) =>
          isLeaseholdError(e, 'invalid_argument') && e.details.field === name;
        assert.throws(() => lh.fence(''), field('scope'));
        const fence = lh.fence('ledger');
        await assert.rejects(fence.check(0), field('token'));
        await assert.rejects(fence.check(null, 1.5), field('token'));
        await assert.rejects(fence.check(null, null as unknown as number), field('token'));
        await assert.rejects(fence.check({} as unknown as CallerTransaction, 1), field('tx'));
        assert.equal(await fence.get(), null);
      },
    );
  });
}
