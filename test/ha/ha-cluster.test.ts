// The HA cluster the failover tests stand on (test/support/ha-cluster.ts): it starts, a row
// committed on the primary in synchronous mode survives the primary's crash, the timeline grows
// at each promotion, a switchover works, and stop() leaves no process and no directory behind.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { haSkip, processesUnder, startHaCluster, type HaCluster } from '../support/ha-cluster.js';

const skip = haSkip();

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('the HA cluster (Patroni, etcd, haproxy)', { skip }, () => {
  let cluster: HaCluster | undefined;
  after(() => cluster?.stop());

  it('keeps a synchronous commit across a failover, grows the timeline, switches over, stops clean', async () => {
    cluster = await startHaCluster({ synchronous: true });
    console.log(`# HA cluster started in ${cluster.startedInMs} ms`);
    const first = await cluster.primary();
    assert.ok(first, 'a primary after the start');
    const timeline1 = await cluster.timeline();

    await query(cluster.url, `CREATE TABLE kept (id int PRIMARY KEY, note text)`);
    await query(cluster.url, `INSERT INTO kept VALUES (1, 'before the failover')`);

    const failover = await cluster.failover();
    console.log(
      `# failover ${failover.from} -> ${failover.to}: writable after ${failover.writableMs} ms, ` +
        `old primary streaming again after ${failover.rejoinedMs} ms`,
    );
    assert.equal(failover.from, first);
    assert.equal(await cluster.primary(), failover.to);
    const afterFailover = await query<{ note: string }>(cluster.url, `SELECT note FROM kept`);
    assert.deepEqual(afterFailover, [{ note: 'before the failover' }], 'the acknowledged row');
    const timeline2 = await cluster.timeline();
    assert.ok(timeline2 > timeline1, `timeline ${timeline1} -> ${timeline2}`);
    await query(cluster.url, `INSERT INTO kept VALUES (2, 'after the failover')`);

    const switchover = await cluster.switchover();
    console.log(
      `# switchover ${switchover.from} -> ${switchover.to}: writable after ${switchover.writableMs} ms`,
    );
    assert.equal(switchover.from, failover.to);
    assert.equal(await cluster.primary(), switchover.to);
    const timeline3 = await cluster.timeline();
    assert.ok(timeline3 > timeline2, `timeline ${timeline2} -> ${timeline3}`);
    const rows = await query<{ id: number }>(cluster.url, `SELECT id FROM kept ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => r.id),
      [1, 2],
    );
    // The standby refuses writes: the library must never write through one.
    const standby = switchover.from;
    await assert.rejects(query(cluster.memberUrls[standby], `INSERT INTO kept VALUES (3, 'x')`), {
      code: '25006',
    });

    const dir = cluster.dir;
    await cluster.stop();
    cluster = undefined;
    assert.deepEqual(processesUnder(dir), [], 'no process left');
    assert.equal(existsSync(dir), false, 'scratch directory removed');
  });
});
