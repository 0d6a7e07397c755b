import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { embeddedConnectionString, startEmbeddedPostgres } from '../embedded/embedded-postgres.js';

export interface ResolvedDatabase {
  readonly connectionString: string;
  /** Human-readable origin, for the first line a command prints. */
  readonly description: string;
  stop(): Promise<void>;
}

/**
 * The database a command talks to: `--database-url`, else DATABASE_URL, else the embedded
 * PostgreSQL kept under `.leasehold/` in the working directory, so a demo's data survives a
 * restart. When that embedded server is already running (the demo started it), commands join
 * it instead of trying to start a second server on the same directory.
 */
export async function resolveDatabase(
  databaseUrl: string | undefined,
  dataDir = '.leasehold/pg',
): Promise<ResolvedDatabase> {
  const url = databaseUrl ?? process.env.DATABASE_URL;
  if (url)
    return {
      connectionString: url,
      description: 'the PostgreSQL at DATABASE_URL',
      stop: async () => {},
    };
  const dir = resolve(dataDir);
  const running = runningEmbeddedPort(dir);
  if (running !== undefined)
    return {
      connectionString: embeddedConnectionString(running),
      description: `the embedded PostgreSQL already running in ${dir} (port ${running})`,
      stop: async () => {},
    };
  const server = await startEmbeddedPostgres({ dataDir: dir });
  return {
    connectionString: server.connectionString,
    description: `embedded PostgreSQL in ${server.dataDir} (port ${server.port})`,
    stop: () => server.stop(),
  };
}

/** The port of a live postmaster in `dir` (postmaster.pid: pid on line 1, port on line 4). */
function runningEmbeddedPort(dir: string): number | undefined {
  const pidFile = resolve(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return undefined; // a stale pid file: the server is not running
  }
}
