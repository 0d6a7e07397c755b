/**
 * The benchmark's PostgreSQL: an embedded server with default durability (fsync and
 * synchronous commit on, as users run it) and pg_stat_statements loaded, or BENCH_DATABASE_URL.
 * Every system under test gets its own schema on the same server, so they are measured on the
 * same database in one run.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';

export interface BenchDatabase {
  readonly url: string;
  /** `embedded` (started for this run) or `given` (BENCH_DATABASE_URL). */
  readonly origin: 'embedded' | 'given';
  readonly settings: Record<string, string>;
  /** Whether pg_stat_statements can be read (preloaded, extension created). */
  readonly statementStats: boolean;
  stop(): Promise<void>;
}

const SHOWN = [
  'server_version',
  'fsync',
  'synchronous_commit',
  'full_page_writes',
  'wal_level',
  'shared_buffers',
  'work_mem',
  'max_wal_size',
  'checkpoint_timeout',
  'autovacuum',
  'max_connections',
  'shared_preload_libraries',
];

export async function startBenchDatabase(): Promise<BenchDatabase> {
  let url = process.env.BENCH_DATABASE_URL;
  let stop = async (): Promise<void> => {};
  const origin = url ? 'given' : 'embedded';
  if (!url) {
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-bench-pg-'));
    await chmod(dir, 0o755);
    const server = await startEmbeddedPostgres({
      dataDir: join(dir, 'data'),
      persistent: false,
      // Every system's statements have their schema in their text, so the run creates a few
      // thousand distinct entries; the default max (5,000) would evict some mid-measurement.
      settings: {
        shared_preload_libraries: 'pg_stat_statements',
        'pg_stat_statements.max': 20_000,
      },
    });
    url = server.connectionString;
    stop = async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const settings: Record<string, string> = {};
    for (const name of SHOWN) settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
    const statementStats = await enableStatementStats(client, settings);
    return { url, origin, settings, statementStats, stop };
  } finally {
    await client.end();
  }
}

/** Creates the extension only where the server already preloads it (never on a whim). */
async function enableStatementStats(
  client: pg.Client,
  settings: Record<string, string>,
): Promise<boolean> {
  if (!(settings['shared_preload_libraries'] ?? '').includes('pg_stat_statements')) return false;
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
    return true;
  } catch {
    return false;
  }
}

let counter = 0;
/** A fresh schema name for one system in one round. */
export function freshSchema(prefix: string): string {
  return `${prefix}_${process.pid}_${++counter}`;
}

/** One short-lived connection for one admin statement. */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await adminQuery(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Writes every dirty page now, so the next family does not pay for the last one's writes: the
 * sustained family leaves gigabytes of WAL behind, and a checkpoint that runs during the next
 * measurement (with its full-page images after it) slowed whichever system it landed on.
 * Needs a superuser or pg_checkpoint; without, the run goes on and says so.
 */
export async function checkpoint(url: string): Promise<boolean> {
  try {
    await adminQuery(url, 'CHECKPOINT');
    return true;
  } catch {
    return false;
  }
}

/** What settle() could not do before a measurement, for the run to say so. */
export interface Settled {
  /** The checkpoint ran (false: no right to run one). */
  checkpointed: boolean;
  /** Autovacuum was still at work when the wait ran out. */
  vacuumBusy: boolean;
}

const AUTOVACUUM_POLL_MS = 250;
const execFileAsync = promisify(execFile);

/**
 * Lets the server and the disk go quiet before a measurement that the one before could
 * disturb: autovacuum's workers done (waited for up to `maxVacuumWaitMs`), a checkpoint, and
 * the kernel's dirty pages written (`sync`). A sustained run leaves a schema of a gigabyte and
 * more behind, dropped at its end; the runs that fell behind had all followed another system's
 * run, sharing the disk with the write-back of its pages (decision 0283). Every system is
 * settled the same way. `sync` acts on this machine: for a server elsewhere
 * (BENCH_DATABASE_URL) it is harmless, and the checkpoint is what counts.
 */
export async function settle(url: string, maxVacuumWaitMs = 30_000): Promise<Settled> {
  const start = performance.now();
  let vacuumBusy = true;
  while (performance.now() - start < maxVacuumWaitMs) {
    const [row] = await adminQuery<{ n: number }>(
      url,
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`,
    );
    if (row!.n === 0) {
      vacuumBusy = false;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, AUTOVACUUM_POLL_MS));
  }
  const checkpointed = await checkpoint(url);
  await execFileAsync('sync');
  return { checkpointed, vacuumBusy };
}

/** The server's WAL insert position, in bytes since its start. */
export async function walPosition(url: string): Promise<bigint> {
  const [row] = await adminQuery<{ lsn: string }>(
    url,
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`,
  );
  return BigInt(row!.lsn.split('.')[0]!);
}

export interface SchemaFootprint {
  deadTuples: number;
  liveTuples: number;
  totalBytes: number;
}

/**
 * Dead and live tuples and total size (tables, indexes, TOAST) of a schema. The statistics are
 * flushed by each backend when it exits, so read this after the system's pools are closed.
 */
export async function schemaFootprint(url: string, schema: string): Promise<SchemaFootprint> {
  const [row] = await adminQuery<{ dead: string; live: string; bytes: string }>(
    url,
    `SELECT coalesce(sum(n_dead_tup), 0)::text AS dead, coalesce(sum(n_live_tup), 0)::text AS live,
            coalesce(sum(pg_total_relation_size(relid)), 0)::text AS bytes
       FROM pg_stat_user_tables WHERE schemaname = $1`,
    [schema],
  );
  return {
    deadTuples: Number(row!.dead),
    liveTuples: Number(row!.live),
    totalBytes: Number(row!.bytes),
  };
}
