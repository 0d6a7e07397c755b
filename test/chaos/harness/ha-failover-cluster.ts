/**
 * Opens the FailoverCluster of a failover chaos run on test/support/ha-cluster.ts (see
 * failover-cluster.ts for what it offers and why).
 */
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { startHaCluster, type HaCluster } from '../../support/ha-cluster.js';
import type { PromotionRecord, ReplicationMode } from '../history.js';
import { wallNow } from '../wall-clock.js';
import type { ChaosDatabase } from './chaos-database.js';
import type { FailoverCluster } from './failover-cluster.js';
import { holdReplication } from './replication-hold.js';

/**
 * Asynchronous runs only: how far behind the standby may be and still be promoted. Patroni's
 * default (1 MB, which ha-cluster.ts keeps) refuses to promote a standby that a standby-lag fault
 * held back a few seconds at chaos volume: the cluster then waits for the old primary to come
 * back, trading availability for fewer lost commits. The run raises it so that the failover
 * happens and its losses are measured; docs/deployment.md gives the setting to choose.
 */
const ASYNC_MAXIMUM_LAG_ON_FAILOVER = 1024 * 1024 * 1024;

export async function openFailoverCluster(
  replication: ReplicationMode,
  log: (line: string) => void,
): Promise<FailoverCluster> {
  const ha: HaCluster = await startHaCluster({ synchronous: replication === 'sync' });
  log(`HA cluster (${replication}) up in ${ha.startedInMs} ms`);
  try {
    if (replication === 'async')
      await patchDynamicConfig(ha, { maximum_lag_on_failover: ASYNC_MAXIMUM_LAG_ON_FAILOVER });
  } catch (error) {
    await ha.stop().catch(() => {});
    throw error;
  }
  const pool = new pg.Pool({ connectionString: ha.url, max: 2, application_name: 'chaos-harness' });
  pool.on('error', () => {});
  const url = new URL(ha.url);
  const database: ChaosDatabase = {
    url: ha.url,
    host: url.hostname,
    port: Number(url.port || 5432),
    cannotRestart: 'the HA cluster replaces pg-restart and pg-crash with failover and switchover',
    restart: () => Promise.reject(new Error('a failover run does not restart the server')),
    crash: () => Promise.reject(new Error('a failover run does not crash the server')),
    close: async () => {},
  };
  return {
    replication,
    database,
    waitHealthy: () => ha.waitHealthy(),
    async describeReplication() {
      const { rows } = await pool.query<{ names: string }>(
        `SELECT current_setting('synchronous_standby_names') AS names`,
      );
      return (
        `replication ${replication} (synchronous_standby_names '${rows[0]!.names}'` +
        `${replication === 'async' ? `, maximum_lag_on_failover ${ASYNC_MAXIMUM_LAG_ON_FAILOVER}` : ''})`
      );
    },
    holdReplication: () => holdReplication(pool),
    async promote(kind, { duringLag } = {}): Promise<PromotionRecord> {
      const at = wallNow();
      try {
        if (kind === 'switchover') {
          // switchover() resolves once the old primary streams again (it waits until healthy).
          const report = await ha.switchover();
          return {
            kind,
            at,
            from: report.from,
            to: report.to,
            timeline: await ha.timeline(),
            unavailableMs: report.writableMs,
            healthyAfterMs: Math.round(wallNow() - at),
          };
        }
        // The held WAL senders die just before the primary: the standby is promoted with what
        // it had when they were stopped.
        duringLag?.cut();
        const report = await ha.failover().catch(async (error: unknown) => {
          // Not promoted: start the killed member again so the run goes on with a primary.
          const back = await ha.primary();
          for (const name of ['m1', 'm2'] as const)
            if (name !== back) await ha.rejoin(name).catch(() => {});
          throw error;
        });
        return {
          kind,
          at,
          from: report.from,
          to: report.to,
          timeline: await ha.timeline(),
          unavailableMs: report.writableMs,
          ...(report.rejoinedMs === undefined ? {} : { healthyAfterMs: report.rejoinedMs }),
          ...(duringLag ? { duringLag: true, heldSince: duringLag.since } : {}),
        };
      } finally {
        duringLag?.release();
      }
    },
    describe: (p) =>
      `${p.kind} ${p.from} -> ${p.to} (timeline ${p.timeline}), writes refused ${p.unavailableMs} ms` +
      (p.healthyAfterMs === undefined
        ? ''
        : `, ${p.from} streaming again after ${p.healthyAfterMs} ms`),
    async close() {
      await pool.end().catch(() => {});
      await ha.stop();
    },
  };
}

/**
 * Changes Patroni's dynamic configuration (kept in etcd, applied by both members) through one
 * member's REST API: PATCH /config. The REST port is read from that member's configuration,
 * which ha-cluster.ts writes as JSON.
 */
async function patchDynamicConfig(ha: HaCluster, change: Record<string, unknown>): Promise<void> {
  const config = JSON.parse(await readFile(join(ha.dir, 'm1.yml'), 'utf8')) as {
    restapi: { listen: string };
  };
  const port = Number(config.restapi.listen.split(':').pop());
  const body = JSON.stringify(change);
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/config',
        method: 'PATCH',
        timeout: 30_000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('PATCH /config timed out')));
    req.on('error', reject);
    req.end(body);
  });
  if (status !== 200) throw new Error(`Patroni refused PATCH /config ${body}: ${status}`);
}
