/**
 * `npm test`: one PostgreSQL for the whole run, then node's test runner over every test file.
 *
 * - DATABASE_URL or TEST_DATABASE_URL given: tests use that server (each test in its own schema).
 * - Otherwise an embedded PostgreSQL starts in a scratch directory and is removed afterwards.
 * Arguments narrow the run to files whose path contains any of them: `npm test -- leases`.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';
import { startEmbeddedPostgres } from '../src/embedded/embedded-postgres.js';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const passThrough = process.argv.slice(2).filter((a) => a.startsWith('-'));

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return findTests(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

const files = findTests(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((needle) => f.includes(needle)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(', ')}`);
  process.exit(1);
}

let databaseUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
let stopServer = async (): Promise<void> => {};
if (!databaseUrl) {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-test-pg-'));
  // The server runs as the unprivileged `postgres` user, which must be able to enter the directory.
  await chmod(dir, 0o755);
  const started = Date.now();
  const server = await startEmbeddedPostgres({
    dataDir: join(dir, 'data'),
    persistent: false,
    ephemeralDurability: true,
  });
  console.log(`embedded PostgreSQL on port ${server.port} (started in ${Date.now() - started} ms)`);
  databaseUrl = server.connectionString;
  stopServer = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
} else {
  console.log('tests use the PostgreSQL given by TEST_DATABASE_URL / DATABASE_URL');
}

// Database tests mostly wait on I/O, so more files than cores can run at once.
const concurrency = process.env.TEST_CONCURRENCY ?? '4';
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    ...passThrough,
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, TEST_DATABASE_URL: databaseUrl }, cwd: root },
);
const code: number = await new Promise((resolve) =>
  child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
await stopServer();
process.exit(code);
