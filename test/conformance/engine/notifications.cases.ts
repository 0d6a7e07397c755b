import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { CallerTransaction, Engine } from '../../../src/engine/engine.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { EventQueue } from '../../support/events.js';
import { waitFor } from '../../support/wait.js';
import { conformanceCase, requiring, type EngineHarness } from '../harness.js';

/**
 * The notification family. Every case proves absence the same way, without sleeping: after
 * the send under test it sends a marker, and since notifications arrive in send (commit) order,
 * the marker arriving first proves the earlier one was never delivered.
 */
export function notificationEngineCases(harness: EngineHarness): void {
  describe(`[${harness.name}] engine: notifications`, () => {
    const h = requiring(harness, 'notifications');
    conformanceCase(
      h,
      'delivers a send to a listener of its topic and not to a listener of another topic',
      async ({ engine }) => {
        const alpha = new EventQueue<string>();
        const beta = new EventQueue<string>();
        await engine.notifyListen({ topic: 'alpha', onNotify: alpha.push });
        await engine.notifyListen({ topic: 'beta', onNotify: beta.push });
        await engine.notifySend({ topic: 'alpha', payload: 'for alpha' });
        await engine.notifySend({ topic: 'beta', payload: 'marker' });
        assert.equal(await alpha.next(), 'for alpha');
        assert.equal(await beta.next(), 'marker', 'beta saw only its own topic');
        assert.equal(alpha.length, 0);
      },
    );

    conformanceCase(
      h,
      'delivers payloads intact, including bars, unicode and an empty payload',
      async ({ engine }) => {
        const received = new EventQueue<string>();
        await engine.notifyListen({ topic: 'intact', onNotify: received.push });
        const payloads = [
          'plain',
          'with|bars|inside|',
          'ünïcödé ✓ 🚀 日本語',
          JSON.stringify({ queue: 'emails', ids: [1, 2, 3] }),
          'x'.repeat(4_000), // well under PostgreSQL's 8000-byte NOTIFY limit
          '',
        ];
        for (const payload of payloads) await engine.notifySend({ topic: 'intact', payload });
        await engine.notifySend({ topic: 'intact' });
        for (const payload of payloads) assert.equal(await received.next(), payload);
        assert.equal(await received.next(), '', 'an omitted payload arrives as the empty string');
      },
    );

    conformanceCase(
      h,
      'stops delivering to a listener once it unsubscribes',
      async ({ engine }) => {
        const leaving = new EventQueue<string>();
        const staying = new EventQueue<string>();
        const subscription = await engine.notifyListen({ topic: 't', onNotify: leaving.push });
        await engine.notifyListen({ topic: 't', onNotify: staying.push });
        await engine.notifySend({ topic: 't', payload: 'before' });
        assert.equal(await leaving.next(), 'before');
        assert.equal(await staying.next(), 'before');

        await subscription.unsubscribe();
        await engine.notifySend({ topic: 't', payload: 'after' });
        assert.equal(await staying.next(), 'after', 'the send went out');
        assert.equal(leaving.length, 0, 'the unsubscribed listener heard nothing');
      },
    );

    conformanceCase(
      h,
      'listens again after the last listener of a topic unsubscribed',
      async ({ engine }) => {
        const first = await engine.notifyListen({ topic: 't', onNotify: () => {} });
        await first.unsubscribe();
        const received = new EventQueue<string>();
        await engine.notifyListen({ topic: 't', onNotify: received.push });
        await engine.notifySend({ topic: 't', payload: 'again' });
        assert.equal(await received.next(), 'again');
      },
    );

    conformanceCase(
      h,
      'delivers to a listener on a second engine sharing the same state',
      async ({ engine, peer }) => {
        const other = await peer();
        const received = new EventQueue<string>();
        await other.notifyListen({ topic: 'shared', onNotify: received.push });
        await engine.notifySend({ topic: 'shared', payload: 'from the first engine' });
        assert.equal(await received.next(), 'from the first engine');
      },
    );

    conformanceCase(
      h,
      'delivers a send made in a committed transaction and never one from a rolled-back transaction',
      async ({ engine }) => {
        const received = new EventQueue<string>();
        await engine.notifyListen({ topic: 'tx', onNotify: received.push });
        await inTransaction(engine, 'rollback', (tx) =>
          engine.notifySend({ topic: 'tx', payload: 'rolled back', tx }),
        );
        await inTransaction(engine, 'commit', async (tx) => {
          await engine.notifySend({ topic: 'tx', payload: 'committed', tx });
          // Nothing is delivered before the commit: the marker sent meanwhile comes first.
          await engine.notifySend({ topic: 'tx', payload: 'sent before the commit' });
          assert.equal(await received.next(), 'sent before the commit');
        });
        await engine.notifySend({ topic: 'tx', payload: 'marker' });
        assert.equal(await received.next(), 'committed');
        assert.equal(await received.next(), 'marker');
        assert.equal(received.length, 0);
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );

    conformanceCase(
      h,
      'calls onReconnect after the listener connection is killed and delivers later sends',
      async ({ engine, clock }) => {
        const pg = postgres(engine);
        const received = new EventQueue<string>();
        const reconnects = new EventQueue<true>();
        await engine.notifyListen({
          topic: 't',
          onNotify: received.push,
          onReconnect: () => reconnects.push(true),
        });
        await engine.notifySend({ topic: 't', payload: 'before' });
        assert.equal(await received.next(), 'before');
        assert.equal(reconnects.length, 0, 'the first connect is not a reconnect');

        const backends = await listenerBackends(pg);
        assert.equal(backends.length, 1, 'one listener connection per engine');
        const killed = backends[0]!;
        await pg.pool.query('SELECT pg_terminate_backend($1)', [killed]);

        // The notifier schedules its reconnect on the engine's clock (a ManualClock here).
        await waitFor('onReconnect after the listener was killed', async () => {
          await clock.advance(200);
          return reconnects.length > 0;
        });
        assert.ok(
          (await listenerBackends(pg)).some((pid) => pid !== killed),
          'a new backend',
        );
        await engine.notifySend({ topic: 't', payload: 'after the reconnect' });
        assert.equal(await received.next(), 'after the reconnect');
      },
      { requires: ['crossProcess'], engine: 'postgres' },
    );
  });
}

function postgres(engine: Engine): PostgresEngine {
  assert.ok(engine instanceof PostgresEngine, 'this case needs a PostgresEngine');
  return engine;
}

/** Pids of the backends whose last statement was the LISTEN on this engine's schema channel. */
async function listenerBackends(engine: PostgresEngine): Promise<number[]> {
  const { rows } = await engine.pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE application_name = 'leasehold-listener' AND query = $1`,
    [`LISTEN "leasehold_${engine.schema}"`],
  );
  return rows.map((r) => r.pid);
}

/** Runs `fn` inside a transaction of the caller's own, then commits or rolls it back. */
async function inTransaction(
  engine: Engine,
  outcome: 'commit' | 'rollback',
  fn: (tx: CallerTransaction) => Promise<void>,
): Promise<void> {
  const client = await postgres(engine).pool.connect();
  try {
    await client.query('BEGIN');
    await fn(client);
    await client.query(outcome === 'commit' ? 'COMMIT' : 'ROLLBACK');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
