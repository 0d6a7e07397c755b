/**
 * The promotable standby itself (test/support/promotable-standby.ts): a promotion moves to a
 * higher timeline; under asynchronous replication a commit the standby never received is lost by
 * a failover although the primary acknowledged it (the lossy path the failover tests rely on);
 * under synchronous replication such a commit is never acknowledged, and what was acknowledged
 * survives; a disconnected standby catches up when reconnected; and the standby's clock can be
 * offset with libfaketime.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import {
  currentTimeline,
  fakeClockEnv,
  startPromotableStandby,
  type PromotableStandby,
  withClient,
} from '../support/promotable-standby.js';
import { waitFor } from '../support/wait.js';

async function rows(url: string, sql: string): Promise<string[]> {
  return withClient(url, async (c) => (await c.query<{ v: string }>(sql)).rows.map((r) => r.v));
}

async function withCluster(
  options: Parameters<typeof startPromotableStandby>[0],
  use: (cluster: PromotableStandby) => Promise<void>,
): Promise<void> {
  const cluster = await startPromotableStandby(options);
  try {
    await use(cluster);
  } finally {
    await cluster.stop();
  }
}

test('async: an acknowledged commit the standby never received is lost by the failover', async () => {
  await withCluster({ synchronous: false }, async (cluster) => {
    const before = await withClient(cluster.primaryUrl, async (c) => {
      await c.query(`CREATE TABLE commits (v text PRIMARY KEY)`);
      await c.query(`INSERT INTO commits VALUES ('replicated')`);
      return currentTimeline(c);
    });
    await cluster.waitForStandby();
    await cluster.disconnectStandby();
    // Acknowledged by the primary (synchronous_commit on: flushed to its own disk) ...
    await rows(cluster.primaryUrl, `INSERT INTO commits VALUES ('acknowledged') RETURNING v`);
    assert.deepEqual(await rows(cluster.primaryUrl, `SELECT v FROM commits ORDER BY v`), [
      'acknowledged',
      'replicated',
    ]);
    // ... but the standby never received it.
    await cluster.crashPrimary();
    const { timeline } = await cluster.promote();
    assert.ok(timeline > before, `timeline ${timeline} after promotion, ${before} before`);
    assert.deepEqual(await rows(cluster.standbyUrl, `SELECT v FROM commits ORDER BY v`), [
      'replicated',
    ]);
    // The promoted standby takes writes.
    await rows(cluster.standbyUrl, `INSERT INTO commits VALUES ('after') RETURNING v`);
  });
});

test('sync: a commit is not acknowledged before the standby has it, and nothing acknowledged is lost', async () => {
  await withCluster({ synchronous: true }, async (cluster) => {
    await withClient(cluster.primaryUrl, async (c) => {
      await c.query(`CREATE TABLE commits (v text PRIMARY KEY)`);
      await c.query(`INSERT INTO commits VALUES ('acknowledged')`);
    });
    // No waitForStandby(): the acknowledgement itself says the standby has flushed it.
    await cluster.disconnectStandby();
    const waiting = new pg.Client({ connectionString: cluster.primaryUrl });
    waiting.on('error', () => {});
    await waiting.connect();
    let outcome = 'pending';
    const insert = waiting
      .query(`INSERT INTO commits VALUES ('unacknowledged')`)
      .then(() => (outcome = 'acknowledged'))
      .catch((error: Error) => (outcome = `failed: ${error.message}`));
    // The commit waits for a standby that does not receive; it shows in pg_stat_activity as SyncRep.
    await withClient(cluster.primaryUrl, (c) =>
      waitFor(
        'the commit to wait for the standby (SyncRep)',
        async () =>
          (
            await c.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND pid = $1`,
              [(waiting as unknown as { processID: number }).processID],
            )
          ).rowCount === 1,
        { timeoutMs: 60_000, intervalMs: 50 },
      ),
    );
    assert.equal(outcome, 'pending');
    await cluster.crashPrimary();
    await insert;
    await waiting.end().catch(() => {});
    assert.match(outcome, /^failed/);
    const { timeline } = await cluster.promote();
    assert.ok(timeline >= 2);
    assert.deepEqual(await rows(cluster.standbyUrl, `SELECT v FROM commits ORDER BY v`), [
      'acknowledged',
    ]);
  });
});

test('the standby runs with its clock offset by libfaketime', async () => {
  await withCluster({ standbyEnv: fakeClockEnv('+30s') }, async (cluster) => {
    const [primaryNow] = await rows(
      cluster.primaryUrl,
      `SELECT extract(epoch FROM clock_timestamp())::text AS v`,
    );
    const [standbyNow] = await rows(
      cluster.standbyUrl,
      `SELECT extract(epoch FROM clock_timestamp())::text AS v`,
    );
    const skew = Number(standbyNow) - Number(primaryNow);
    // 30 s ahead, less the time between the two reads (generous: the machine may be loaded).
    assert.ok(skew > 20 && skew < 31, `standby clock ${skew} s ahead`);
  });
});

test('a disconnected standby catches up once reconnected (the slot kept its WAL)', async () => {
  await withCluster({ synchronous: false }, async (cluster) => {
    await rows(cluster.primaryUrl, `CREATE TABLE commits (v text PRIMARY KEY) `);
    await cluster.disconnectStandby();
    await rows(cluster.primaryUrl, `INSERT INTO commits VALUES ('while away') RETURNING v`);
    await cluster.reconnectStandby();
    await cluster.waitForStandby();
    assert.deepEqual(await rows(cluster.standbyUrl, `SELECT v FROM commits`), ['while away']);
  });
});
