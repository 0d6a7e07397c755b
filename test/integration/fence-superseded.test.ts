/**
 * The fence is what makes a fencing token protect anything: a holder writes its business rows
 * and checks its token through `lh.fence(scope).check(tx, token)` in one transaction, so the
 * write commits only if no newer token was seen for the scope. Here two holders of a lease lock
 * take turns; the first stalls past its expiry (it ignores its signal, as a paused process
 * would) and then tries to write after the second has. Its write must be refused and rolled
 * back, while both writes it made as the current holder and the successor's write stand.
 *
 * The database clock is pinned to a ManualClock so the expiry happens exactly when the test says.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type pg from 'pg';
import { ManualClock } from '../../src/core/clock.js';
import { isLeaseholdError } from '../../src/core/errors.js';
import type { FencingToken } from '../../src/core/types.js';
import type { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema, type SchemaContext } from '../support/database.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const TTL = 10_000;

interface Side {
  engine: PostgresEngine;
  lh: Leasehold;
}

/** One process: its own engine (and pool) on the shared schema and the shared pinned clock. */
async function side(schema: SchemaContext, clock: ManualClock): Promise<Side> {
  const engine = await schema.engine({ clock });
  return { engine, lh: Leasehold.fromEngine(engine) };
}

async function createLedger(engine: PostgresEngine, schema: string): Promise<void> {
  await engine.pool.query(
    `CREATE TABLE "${schema}".ledger (id serial PRIMARY KEY, holder text NOT NULL, token bigint NOT NULL, amount integer NOT NULL)`,
  );
}

async function ledger(engine: PostgresEngine, schema: string): Promise<string[]> {
  const { rows } = await engine.pool.query<{ holder: string; token: string; amount: number }>(
    `SELECT holder, token, amount FROM "${schema}".ledger ORDER BY id`,
  );
  return rows.map((r) => `${r.holder}:${r.token}:${r.amount}`);
}

/** The business write, guarded: check the token and insert, in one transaction. */
async function guardedWrite(
  client: pg.PoolClient,
  s: Side,
  schema: string,
  holder: string,
  token: FencingToken,
  amount: number,
): Promise<void> {
  await client.query('BEGIN');
  try {
    await s.lh.fence('ledger').check(client, token);
    await client.query(
      `INSERT INTO "${schema}".ledger (holder, token, amount) VALUES ($1, $2, $3)`,
      [holder, token, amount],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

async function write(
  s: Side,
  schema: string,
  holder: string,
  token: FencingToken,
  amount: number,
): Promise<void> {
  const client = await s.engine.pool.connect();
  try {
    await guardedWrite(client, s, schema, holder, token, amount);
  } finally {
    client.release();
  }
}

describe('fence: a superseded lease-lock holder', () => {
  it('is refused and rolled back when it writes after its successor, whose write is accepted', () =>
    withSchema('fence superseded', async (schema) => {
      const clock = new ManualClock();
      const a = await side(schema, clock);
      const b = await side(schema, clock);
      await createLedger(a.engine, schema.schema);

      const lockA = a.lh.locks.lease('ledger', { ttl: TTL, autoRenew: false, holder: 'a' });
      const tokenA = await lockA.lock();
      await write(a, schema.schema, 'a', tokenA, 10); // current holder: accepted

      // A stalls past its expiry. Its signal fired at the trust deadline; it ignores it.
      await clock.advance(TTL);
      assert.ok(isLeaseholdError(lockA.signal.reason, 'lease_lost'));
      const lockB = b.lh.locks.lease('ledger', { ttl: TTL, autoRenew: false, holder: 'b' });
      const tokenB = await lockB.lock();
      assert.ok(tokenB > tokenA);
      await write(b, schema.schema, 'b', tokenB, 20);

      await assert.rejects(write(a, schema.schema, 'a', tokenA, 99), (e: unknown) => {
        assert.ok(isLeaseholdError(e, 'stale_token'));
        assert.equal(e.details.token, tokenA);
        assert.equal(e.details.newest, tokenB);
        return true;
      });
      await write(b, schema.schema, 'b', tokenB, 30); // the current holder writes on

      assert.deepEqual(await ledger(a.engine, schema.schema), [
        `a:${tokenA}:10`,
        `b:${tokenB}:20`,
        `b:${tokenB}:30`,
      ]);
      assert.equal(await a.lh.fence('ledger').get(), tokenB);
      await lockB.unlock();
    }));

  it("waits for the successor's open transaction, then is refused once it commits", () =>
    withSchema('fence superseded concurrent', async (schema) => {
      const clock = new ManualClock();
      const a = await side(schema, clock);
      const b = await side(schema, clock);
      await createLedger(a.engine, schema.schema);

      const lockA = a.lh.locks.lease('ledger', { ttl: TTL, autoRenew: false, holder: 'a' });
      const tokenA = await lockA.lock();
      await write(a, schema.schema, 'a', tokenA, 10);
      await clock.advance(TTL);
      const lockB = b.lh.locks.lease('ledger', { ttl: TTL, autoRenew: false, holder: 'b' });
      const tokenB = await lockB.lock();

      // B checks and writes but has not committed yet.
      const clientB = await b.engine.pool.connect();
      const clientA = await a.engine.pool.connect();
      try {
        await clientB.query('BEGIN');
        await b.lh.fence('ledger').check(clientB, tokenB);
        await clientB.query(
          `INSERT INTO "${schema.schema}".ledger (holder, token, amount) VALUES ('b', $1, 20)`,
          [tokenB],
        );
        // A's guarded write starts meanwhile: its check waits on the scope's row.
        const pidA = (await clientA.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
          .rows[0]!.pid;
        const writeA = guardedWrite(clientA, a, schema.schema, 'a', tokenA, 99).then(
          () => 'accepted',
          (error: unknown) => error,
        );
        await waitFor("A's check to wait for B's transaction", async () => {
          const { rows } = await a.engine.pool.query<{ waiting: boolean }>(
            `SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1`,
            [pidA],
          );
          return rows[0]?.waiting === true;
        });
        await clientB.query('COMMIT');
        const outcome = await writeA;
        assert.ok(isLeaseholdError(outcome, 'stale_token'), `A's write: ${String(outcome)}`);
      } finally {
        clientA.release();
        clientB.release();
      }
      assert.deepEqual(await ledger(a.engine, schema.schema), [`a:${tokenA}:10`, `b:${tokenB}:20`]);
      await lockB.unlock();
    }));
});
