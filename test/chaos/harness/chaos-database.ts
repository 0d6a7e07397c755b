/**
 * The PostgreSQL of a chaos run. By default the harness starts its own embedded server on a
 * persistent data directory, with default durability stated explicitly (fsync, synchronous_commit
 * and full_page_writes on), so it can stop and start it (pg-restart) or crash it (pg-crash) on the
 * same data and port: a crash must lose nothing that was acknowledged. Given a DATABASE_URL
 * instead, it uses that server and can do neither: those faults are then skipped, and the summary
 * says so.
 */
import { readdir, readFile } from 'node:fs/promises';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from '../../../src/embedded/embedded-postgres.js';

/** PostgreSQL's defaults, passed explicitly so that no configuration can turn them off. */
export const DURABLE_SETTINGS = {
  fsync: 'on',
  synchronous_commit: 'on',
  full_page_writes: 'on',
} as const;

export interface ChaosDatabase {
  /** A direct connection string (the harness's own; children go through the proxy). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Why the pg-restart and pg-crash faults cannot run, or null when they can. */
  readonly cannotRestart: string | null;
  /** Stops the server and starts it again on the same data and port. */
  restart(): Promise<void>;
  /**
   * SIGKILL of the postmaster and every process it started (no shutdown checkpoint, nothing
   * flushed that was not already), then a start on the same data and port, which runs crash
   * recovery. Answers what happened, for the fault's record.
   */
  crash(): Promise<string>;
  close(): Promise<void>;
}

export async function openChaosDatabase(externalUrl?: string): Promise<ChaosDatabase> {
  if (externalUrl) {
    const parsed = new URL(externalUrl);
    return {
      url: externalUrl,
      host: parsed.hostname,
      port: Number(parsed.port || 5432),
      cannotRestart: 'the database was given by DATABASE_URL, which the harness cannot restart',
      restart: () => Promise.reject(new Error('cannot restart an external database')),
      crash: () => Promise.reject(new Error('cannot crash an external database')),
      close: async () => {},
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-chaos-pg-'));
  // The server runs as the unprivileged `postgres` user, which must be able to enter the directory.
  await chmod(dir, 0o755);
  const dataDir = join(dir, 'data');
  let recoveryLog: string[] = [];
  const start = (port?: number): Promise<EmbeddedPostgres> =>
    startEmbeddedPostgres({
      dataDir,
      persistent: true,
      settings: DURABLE_SETTINGS,
      onLog: (line) => void recoveryLog.push(line),
      ...(port === undefined ? {} : { port }),
    });
  let server: EmbeddedPostgres | undefined = await start();
  const port = server.port;
  return {
    url: server.connectionString,
    host: '127.0.0.1',
    port,
    cannotRestart: null,
    async restart() {
      await server?.stop();
      server = undefined;
      server = await start(port);
    },
    async crash() {
      const running = server;
      if (!running) throw new Error('the chaos database is not running');
      const postmaster = Number(
        (await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0],
      );
      // Stopped first, so that it forks no backend between the listing of its children and
      // the kill: an orphan backend would keep the old shared memory in use, and the next
      // postmaster refuses to start beside it.
      signal(postmaster, 'SIGSTOP');
      await stoppedState(postmaster);
      const children = await childrenOf(postmaster);
      server = undefined;
      for (const pid of [postmaster, ...children]) signal(pid, 'SIGKILL');
      // In the same tick as the kill: the embedded server's stop() waits for the exit event.
      await running.stop();
      await gone(children);
      recoveryLog = [];
      server = await startAgain(
        () => start(port),
        () => recoveryLog,
      );
      const recovered = recoveryLog.some((line) =>
        /automatic recovery in progress|redo (starts|done)/.test(line),
      );
      return `SIGKILL of the postmaster and ${children.length} children; ${recovered ? 'crash recovery ran' : 'no crash recovery logged'}`;
    },
    async close() {
      await server?.stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

function stateOf(stat: string): string {
  // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
  return stat.slice(stat.lastIndexOf(')') + 2)[0] ?? '';
}

/** Waits until `pid` is stopped (or gone): a signal is delivered asynchronously. */
async function stoppedState(pid: number): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat === '' || ['T', 't', 'Z'].includes(stateOf(stat))) return;
    await sleep(10);
  }
}

/**
 * Starts the crashed server again. A killed backend can hold the old shared memory for a
 * moment after its exit is visible, so a refused start is retried a few times.
 */
async function startAgain(
  start: () => Promise<EmbeddedPostgres>,
  log: () => readonly string[],
): Promise<EmbeddedPostgres> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= 10)
        throw new Error(`the crashed server did not start again: ${log().slice(-5).join(' | ')}`, {
          cause: error,
        });
      await sleep(500);
    }
  }
}

/** The processes whose parent is `pid` (from /proc: the postmaster's backends and workers). */
async function childrenOf(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === pid) found.push(Number(entry));
  }
  return found;
}

/** Waits until none of `pids` is alive (a zombie counts as gone): a new postmaster refuses to
 * start while an old backend still holds the shared memory. */
async function gone(pids: readonly number[]): Promise<void> {
  const alive = async (pid: number): Promise<boolean> => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    return stat !== '' && stateOf(stat) !== 'Z';
  };
  for (let round = 0; round < 200; round++) {
    if (!(await Promise.all(pids.map(alive))).some(Boolean)) return;
    await sleep(50);
  }
  throw new Error(`processes of the crashed server still alive after 10 s: ${pids.join(', ')}`);
}

/** The server's durability settings as it reports them (`SHOW`), e.g. "fsync on, …". */
export async function readDurability(pool: pg.Pool): Promise<string> {
  const shown: string[] = [];
  for (const name of Object.keys(DURABLE_SETTINGS)) {
    const { rows } = await pool.query<Record<string, string>>(`SHOW ${name}`);
    shown.push(`${name} ${rows[0]![name]}`);
  }
  return shown.join(', ');
}
