/**
 * The test database: the server named by TEST_DATABASE_URL (set by `npm test`), or an embedded
 * one started for this process when a file runs on its own. Each test gets its own schema,
 * named after the test, dropped when the test passes and kept when it fails, so a failure can
 * be inspected with psql.
 */
import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';
import {
  PostgresEngine,
  type PostgresEngineOptions,
} from '../../src/engine/postgres/postgres-engine.js';

let urlPromise: Promise<string> | undefined;
let adminPool: pg.Pool | undefined;
/** Stops the server this process started (a file run on its own); its child keeps node alive. */
let stopOwnServer: (() => Promise<void>) | undefined;

export function testDatabaseUrl(): Promise<string> {
  urlPromise ??= (async () => {
    const given = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
    if (given) return given;
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-test-file-pg-'));
    // The server runs as the unprivileged `postgres` user, which must be able to enter the directory.
    await chmod(dir, 0o755);
    const server = await startEmbeddedPostgres({
      dataDir: join(dir, 'data'),
      persistent: false,
      ephemeralDurability: true,
    });
    stopOwnServer = () => server.stop();
    return server.connectionString;
  })();
  return urlPromise;
}

async function admin(): Promise<pg.Pool> {
  if (!adminPool) {
    adminPool = new pg.Pool({ connectionString: await testDatabaseUrl(), max: 2 });
    adminPool.on('error', () => {});
  }
  return adminPool;
}

/** A schema name derived from the test name: readable in psql, unique per run. */
export function schemaFor(testName: string): string {
  const slug = testName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40);
  return `t_${slug}_${Math.random().toString(36).slice(2, 8)}`;
}

export interface SchemaContext {
  schema: string;
  url: string;
  /** A migrated engine on this schema; closed after the test. */
  engine(
    options?: Omit<PostgresEngineOptions, 'schema' | 'connectionString' | 'pool'>,
  ): Promise<PostgresEngine>;
}

/** Runs `fn` with a fresh schema; drops it on success, keeps it (and says so) on failure. */
export async function withSchema<T>(
  testName: string,
  fn: (ctx: SchemaContext) => Promise<T>,
): Promise<T> {
  const url = await testDatabaseUrl();
  const schema = schemaFor(testName);
  const engines: PostgresEngine[] = [];
  const ctx: SchemaContext = {
    schema,
    url,
    engine: async (options = {}) => {
      const engine = new PostgresEngine({ connectionString: url, schema, poolSize: 4, ...options });
      engines.push(engine);
      await engine.migrate();
      return engine;
    },
  };
  let passed = false;
  try {
    const result = await fn(ctx);
    passed = true;
    return result;
  } finally {
    await Promise.all(engines.map((e) => e.close().catch(() => {})));
    if (passed) await (await admin()).query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    else console.error(`# kept schema "${schema}" of failed test "${testName}" for inspection`);
  }
}

export async function closeTestDatabase(): Promise<void> {
  await adminPool?.end();
  adminPool = undefined;
  const stop = stopOwnServer;
  stopOwnServer = undefined;
  urlPromise = undefined;
  await stop?.();
}
