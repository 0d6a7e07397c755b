/**
 * The HA cluster of a failover chaos run (docs/decisions/0226): etcd, two Patroni members and
 * haproxy routing to the primary (test/support/ha-cluster.ts; opened by ha-failover-cluster.ts), with what the harness's cluster
 * faults need on top: a promotion measured from outside (how long writes through haproxy were
 * refused, which member leads after, on which timeline), and replication held back
 * (replication-hold.ts). Children reach haproxy through the fault proxy, as they reach the single
 * server in the normal run; the harness's own pool goes to haproxy directly.
 */
import type { PromotionRecord, ReplicationMode } from '../history.js';
import type { ChaosDatabase } from './chaos-database.js';
import type { ReplicationHold } from './replication-hold.js';

export interface FailoverCluster {
  readonly replication: ReplicationMode;
  /** haproxy's address, as a ChaosDatabase; pg-restart and pg-crash are not among its faults. */
  readonly database: ChaosDatabase;
  /** Both members up, the standby streaming (and in sync mode, synchronous). */
  waitHealthy(): Promise<void>;
  /** The replication settings in force, for the line printed before the summary. */
  describeReplication(): Promise<string>;
  holdReplication(): Promise<ReplicationHold>;
  /**
   * Kills the primary (failover) or asks Patroni to hand over (switchover), and resolves once
   * the standby is the primary, writes go through haproxy again and the old primary is back as
   * a streaming standby. With `duringLag` (a failover only), the held WAL senders are killed
   * just before the primary, so the standby is promoted with only what it had received.
   */
  promote(
    kind: 'failover' | 'switchover',
    options?: { duringLag?: ReplicationHold },
  ): Promise<PromotionRecord>;
  describe(promotion: PromotionRecord): string;
  close(): Promise<void>;
}
