/**
 * Carries out one planned fault and records the wall-clock window during which it was in force.
 * A killed process's window lasts until its next incarnation is ready, and a restarted server's
 * until it accepts connections again: that is how long the fault kept them out of play. A crashed
 * server (pg-crash) is down from the kill until crash recovery has finished and it accepts
 * connections on the same data directory.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { FaultRecord, FaultType } from '../history.js';
import { wallNow } from '../wall-clock.js';
import type { ChaosDatabase } from './chaos-database.js';
import type { FaultProxy } from './fault-proxy.js';
import type { PlannedFault } from './fault-plan.js';
import type { Fleet } from './fleet.js';
import type { FailoverCluster } from './failover-cluster.js';

export interface FaultTools {
  fleet: Fleet;
  proxy: FaultProxy;
  database: ChaosDatabase;
  /** The harness's own direct pool (for pg_terminate_backend). */
  admin: pg.Pool;
  /** In a failover run: the HA cluster behind haproxy (the failover, switchover, lag faults). */
  cluster?: FailoverCluster;
}

const CLUSTER_FAULTS: ReadonlySet<FaultType> = new Set(['failover', 'switchover', 'standby-lag']);

export async function injectFault(tools: FaultTools, fault: PlannedFault): Promise<FaultRecord> {
  const { fleet, proxy, database, admin, cluster } = tools;
  // A cluster fault starts on a healthy cluster (the last one's member back as a streaming
  // standby): waiting for that is not part of its window.
  if (cluster && CLUSTER_FAULTS.has(fault.type)) await cluster.waitHealthy();
  const startedAt = wallNow();
  const record = (extra: Partial<FaultRecord> = {}): FaultRecord => ({
    type: fault.type,
    target: fault.target,
    startedAt,
    endedAt: wallNow(),
    ...extra,
  });
  const target = fault.target ?? '';
  switch (fault.type) {
    case 'sigkill':
      await fleet.restart(target, 60_000);
      return record();
    case 'sigstop':
      fleet.signal(target, 'SIGSTOP');
      await sleep(fault.durationMs);
      fleet.signal(target, 'SIGCONT');
      return record();
    case 'stall':
      return { ...record(), endedAt: await fleet.stall(target, fault.durationMs) };
    case 'terminate-backend': {
      if (cluster)
        return record({
          skipped:
            'behind haproxy the server sees haproxy as every client, so one child’s sessions cannot be told apart',
        });
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE client_port = ANY($1::int[]) AND application_name LIKE 'leasehold%'`,
        [proxy.upstreamPorts(target)],
      );
      return record({ detail: `${rowCount ?? 0} sessions` });
    }
    case 'proxy-blackhole':
      proxy.setMode(target, { kind: 'blackhole' });
      await sleep(fault.durationMs);
      proxy.setMode(target, { kind: 'pass' });
      return record();
    case 'proxy-latency':
      proxy.setMode(target, { kind: 'latency', ms: fault.latencyMs ?? 200 });
      await sleep(fault.durationMs);
      proxy.setMode(target, { kind: 'pass' });
      return record({ detail: `${fault.latencyMs} ms per chunk` });
    case 'proxy-reset':
      return record({ detail: `${proxy.reset(target)} connections` });
    case 'pg-restart':
      if (database.cannotRestart) return record({ skipped: database.cannotRestart });
      await database.restart();
      return record();
    case 'pg-crash':
      if (database.cannotRestart) return record({ skipped: database.cannotRestart });
      return record({ detail: await database.crash() });
    case 'failover':
    case 'switchover': {
      if (!cluster) return record({ skipped: 'not a failover run' });
      const promotion = await cluster.promote(fault.type).catch((error: Error) => error);
      if (promotion instanceof Error)
        return record({ detail: `no promotion: ${firstLine(promotion)}` });
      return record({ promotion, detail: cluster.describe(promotion) });
    }
    case 'standby-lag': {
      if (!cluster) return record({ skipped: 'not a failover run' });
      const hold = await cluster.holdReplication();
      try {
        await sleep(fault.durationMs);
      } catch (error) {
        hold.release();
        throw error;
      }
      if (!fault.thenFailover) {
        hold.release();
        return record({
          detail: `${hold.senders.length} WAL sender(s) held ${fault.durationMs} ms`,
        });
      }
      const promotion = await cluster
        .promote('failover', { duringLag: hold })
        .catch((error: Error) => error);
      if (promotion instanceof Error)
        return record({
          detail: `held ${fault.durationMs} ms, then no promotion: ${firstLine(promotion)}`,
        });
      return record({
        promotion,
        detail: `${hold.senders.length} WAL sender(s) held ${fault.durationMs} ms, then ${cluster.describe(promotion)}`,
      });
    }
  }
}

/** ha-cluster.ts appends the cluster's last log lines to its errors: the record keeps the first. */
function firstLine(error: Error): string {
  return error.message.split('\n')[0]!;
}
