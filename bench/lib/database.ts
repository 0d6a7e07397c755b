/**
 * The benchmark's PostgreSQL: an embedded server with default durability (fsync and
 * synchronous commit on, as users run it), or BENCH_DATABASE_URL. Every system under test gets
 * its own schema on the same server, so they are measured on the same database in one run.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';

export interface BenchDatabase {
  readonly url: string;
  readonly settings: Record<string, string>;
  stop(): Promise<void>;
}

const SHOWN = [
  'server_version',
  'fsync',
  'synchronous_commit',
  'shared_buffers',
  'max_connections',
  'wal_level',
];

export async function startBenchDatabase(): Promise<BenchDatabase> {
  let url = process.env.BENCH_DATABASE_URL;
  let stop = async (): Promise<void> => {};
  if (!url) {
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-bench-pg-'));
    await chmod(dir, 0o755);
    const server = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), persistent: false });
    url = server.connectionString;
    stop = async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const settings: Record<string, string> = {};
  for (const name of SHOWN) settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
  await client.end();
  return { url, settings, stop };
}

let counter = 0;
/** A fresh schema name for one system in one round. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${process.pid}_${++counter}`;
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}
