/**
 * The standby-lag fault: replication from the primary held back while clients keep committing.
 * The primary's WAL senders are stopped (SIGSTOP; everything runs on this machine, as root or
 * as the owner of the cluster): nothing more reaches the standby, while the primary goes on
 * writing WAL to its own disk. Under asynchronous replication commits are acknowledged
 * meanwhile, and a failover before the senders resume loses them; under synchronous
 * replication commits wait for the standby instead (nothing is acknowledged that it lacks).
 *
 * Why the sender and not the receiver, or a proxy on the replication connection: a stopped
 * receiver leaves what was sent in the kernel's socket buffers, which a killed primary's kernel
 * still delivers (megabytes on loopback), so how much is lost would depend on buffer sizes; and
 * Patroni builds the standby's `primary_conninfo` from the leader's own address, so a proxy
 * would need the cluster's configuration changed. A stopped sender holds back everything after
 * the moment it stopped, which is what a congested or distant replication link does.
 */
import type pg from 'pg';
import { wallNow } from '../wall-clock.js';

export interface ReplicationHold {
  /** The WAL sender processes held (their pids). */
  readonly senders: readonly number[];
  /** When they were stopped (wall). */
  readonly since: number;
  /** Lets replication go on (SIGCONT): the standby catches up. Harmless once they are gone. */
  release(): void;
  /**
   * Kills the held senders (SIGKILL), for a failover while replication is held: not one more
   * byte of WAL leaves the primary. PostgreSQL's backends are each in their own session, so
   * killing the postmaster's process group does not reach them, and a stopped sender would
   * never notice its postmaster died; and resumed, it could still send some WAL first. (The
   * postmaster takes a killed child for a crash and restarts its backends: the primary is about
   * to be killed anyway.)
   */
  cut(): void;
}

/** Stops every WAL sender of the primary `primary` is connected to. */
export async function holdReplication(primary: pg.Pool): Promise<ReplicationHold> {
  const listSenders = `SELECT pid FROM pg_stat_replication WHERE pid IS NOT NULL`;
  // Once more on a failure: an idle connection of the pool may lead to a server the last
  // promotion restarted.
  const { rows } = await primary
    .query<{ pid: number }>(listSenders)
    .catch(() => primary.query<{ pid: number }>(listSenders));
  const senders = rows.map((r) => r.pid);
  const signal = (name: NodeJS.Signals): void => {
    for (const pid of senders) {
      try {
        process.kill(pid, name);
      } catch {
        // Gone already (the primary was killed, or the sender restarted).
      }
    }
  };
  signal('SIGSTOP');
  return {
    senders,
    since: wallNow(),
    release: () => signal('SIGCONT'),
    cut: () => {
      signal('SIGKILL');
      signal('SIGCONT');
    },
  };
}
