/**
 * The PostgreSQL of a chaos run. By default the harness starts its own embedded server on a
 * persistent data directory, so it can stop and start it (the pg-restart fault) on the same port.
 * Given a DATABASE_URL instead, it uses that server and cannot restart it: that fault is then
 * skipped, and the summary says so.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from '../../../src/embedded/embedded-postgres.js';

export interface ChaosDatabase {
  /** A direct connection string (the harness's own; children go through the proxy). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Why the pg-restart fault cannot run, or null when it can. */
  readonly cannotRestart: string | null;
  /** Stops the server and starts it again on the same data and port. */
  restart(): Promise<void>;
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
      close: async () => {},
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-chaos-pg-'));
  // The server runs as the unprivileged `postgres` user, which must be able to enter the directory.
  await chmod(dir, 0o755);
  const dataDir = join(dir, 'data');
  // Durable settings (no ephemeralDurability): a restart must not lose committed increments.
  let server: EmbeddedPostgres | undefined = await startEmbeddedPostgres({
    dataDir,
    persistent: true,
  });
  const port = server.port;
  return {
    url: server.connectionString,
    host: '127.0.0.1',
    port,
    cannotRestart: null,
    async restart() {
      await server?.stop();
      server = undefined;
      server = await startEmbeddedPostgres({ dataDir, port, persistent: true });
    },
    async close() {
      await server?.stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
