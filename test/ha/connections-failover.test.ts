/**
 * Connections across a failover (issue 22, item 2), on a real Patroni cluster:
 *
 * - a statement that lands on a standby is `unavailable` (never a permanent error) and its
 *   connection is dropped, not handed back to the pool, so the retry connects again;
 * - a lock connection that reaches a standby is refused: a standby grants advisory locks of
 *   its own that exclude nobody on the primary;
 * - after a promotion the pool reaches the new primary by itself and the listener listens again
 *   (notifications flow, subscribers are told to catch up).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isLeaseholdError } from '../../src/core/errors.js';
import { resolveConnectionTiming } from '../../src/engine/postgres/connection-timing.js';
import { PgContext } from '../../src/engine/postgres/context.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { haSkip, startHaCluster, type HaCluster, type MemberName } from '../support/ha-cluster.js';
import { waitFor } from '../support/wait.js';

const skip = haSkip();
const SCHEMA = 'ha_connections';

describe('connections across a failover (Patroni cluster)', { skip }, () => {
  let cluster: HaCluster;
  let standby: MemberName;
  const engines: PostgresEngine[] = [];
  const open = async (url: string): Promise<PostgresEngine> => {
    const engine = new PostgresEngine({ connectionString: url, schema: SCHEMA, poolSize: 2 });
    engines.push(engine);
    return engine;
  };

  before(async () => {
    cluster = await startHaCluster({ synchronous: true });
    const primary = (await cluster.primary())!;
    standby = primary === 'm1' ? 'm2' : 'm1';
    await (await open(cluster.url)).migrate();
  });
  after(async () => {
    for (const engine of engines) await engine.close().catch(() => {});
    await cluster?.stop();
  });

  it('a write that lands on a standby is unavailable, and its connection is dropped', async () => {
    const onStandby = await open(cluster.memberUrls[standby]);
    await assert.rejects(
      onStandby.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: 10_000 }),
      (error) => isLeaseholdError(error) && error.code === 'unavailable',
    );
    assert.equal(onStandby.pool.totalCount, 0, 'the pool kept no connection to the standby');

    // A transaction on a pooled client: ROLLBACK would succeed on the standby, and the client
    // would go back to the pool pointing at a server that never takes a write.
    const pool = new pg.Pool({ connectionString: cluster.memberUrls[standby], max: 1 });
    const ctx = new PgContext(
      pool,
      SCHEMA,
      `"${SCHEMA}"`,
      undefined,
      undefined,
      { connectionString: cluster.memberUrls[standby] },
      resolveConnectionTiming({}),
    );
    try {
      await assert.rejects(
        ctx.transaction('ProbeWrite', (client) =>
          client.query(`CREATE TABLE "${SCHEMA}".never (x int)`),
        ),
        (error) => isLeaseholdError(error) && error.code === 'unavailable',
      );
      assert.equal(pool.totalCount, 0, 'the transaction dropped its connection to the standby');
    } finally {
      await pool.end();
    }
  });

  it('a lock connection that reaches a standby is refused; the primary grants the lock', async () => {
    const onStandby = await open(cluster.memberUrls[standby]);
    const onPrimary = await open(cluster.url);
    await assert.rejects(
      onStandby.advisoryTryLock({ name: 'ha-lock' }),
      (error) => isLeaseholdError(error) && error.code === 'unavailable',
      'an advisory lock granted by a standby would exclude nobody',
    );
    await assert.rejects(
      onStandby.sessionLockTryAcquire({ name: 'ha-lock' }),
      (error) => isLeaseholdError(error) && error.code === 'unavailable',
    );
    const lock = await onPrimary.advisoryTryLock({ name: 'ha-lock' });
    assert.ok(lock, 'the primary grants it');
    await lock.release();
  });

  it('after a promotion the pool reaches the new primary and the listener listens again', async () => {
    const engine = await open(cluster.url);
    const received: string[] = [];
    let reconnects = 0;
    await engine.notifyListen({
      topic: 'ha',
      onNotify: (payload) => void received.push(payload ?? ''),
      onReconnect: () => void reconnects++,
    });
    await engine.notifySend({ topic: 'ha', payload: 'before' });
    await waitFor('the notification before the failover', () => received.includes('before'));

    const failover = await cluster.failover({ rejoin: false });
    // Retried the way callers retry: every failure on the way is `unavailable`.
    const failures: unknown[] = [];
    const lease = await waitFor(
      'a lease from the new primary',
      async () => {
        try {
          const result = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: 5_000 });
          return result.acquired ? result.lease : undefined;
        } catch (error) {
          failures.push(error);
          return undefined;
        }
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    assert.ok(lease.token > 0);
    assert.deepEqual(
      failures.filter((e) => !isLeaseholdError(e) || e.code !== 'unavailable').map(String),
      [],
      'only unavailable on the way',
    );
    const { rows } = await engine.pool.query<{ port: number; standby: boolean }>(
      'SELECT inet_server_port() AS port, pg_is_in_recovery() AS standby',
    );
    assert.equal(rows[0]!.standby, false);
    assert.equal(
      `${rows[0]!.port}`,
      new URL(cluster.memberUrls[failover.to]).port,
      'the pool reached the new primary',
    );

    // The listener: reconnected by itself, subscribers told to catch up, notifications flow.
    await waitFor('the listener to listen again', () => reconnects > 0, { timeoutMs: 60_000 });
    await waitFor(
      'a notification after the failover',
      async () => {
        await engine.notifySend({ topic: 'ha', payload: 'after' }).catch(() => {});
        await sleep(100);
        return received.includes('after');
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await cluster.rejoin(failover.from);
  });
});
