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

/** Suites with scripts of their own (package.json), left out of a run without filters. */
const SEPARATE_SUITES = [
  'test/scale/',
  'test/ha/',
  'test/chaos/broken-variants.test.ts',
  'test/bench/quick.test.ts',
  'test/workflows/',
  'test/model/',
  'test/conformance/postgres-transaction-pooling.test.ts',
];

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return findTests(path);
    return path.endsWith('.test.ts') ? [path] : [];
  });
}

const files = findTests(join(root, 'test'))
  .map((f) => relative(root, f))
  // The scale-out tests (test/scale/) start a dozen processes: `npm run test:scale` runs them.
  // The HA tests (test/ha/) start a Patroni cluster each: `npm run test:ha` runs them.
  // The broken chaos variants (eight fault runs of up to half a minute each, some repeated on a
  // second seed) take three minutes: `npm run test:variants` runs them. The benchmark's smoke
  // test (every scenario at tiny counts, peers included) takes two: `npm run test:bench`. The
  // workflows under process faults (test/workflows/, a few minutes of killed and frozen worker
  // processes): `npm run test:workflows`. The formal model's simulator runs (test/model/, two quint
  // processes of tens of seconds each on both cores): `npm run test:model`. The whole conformance
  // suite again through pgbouncer in transaction-pooling mode (41 s alone, 149 s in the phase):
  // `npm run test:pooling`. CI runs all seven.
  .filter((f) =>
    filters.length === 0
      ? !SEPARATE_SUITES.some((prefix) => f.startsWith(prefix))
      : filters.some((needle) => f.includes(needle)),
  )
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

// Database tests mostly wait on I/O, so more files than cores can run at once. Tests that start
// several Node processes or a browser (processes/, cli/, browser/, the concurrent migrate), whose
// startup is CPU-bound, run in a second phase, two at a time, so their timing bounds are not
// measured against a machine busy with everything else.
const concurrency = process.env.TEST_CONCURRENCY ?? '4';
const processConcurrency = process.env.TEST_PROCESS_CONCURRENCY ?? '2';
const isProcessTest = (f: string): boolean =>
  [
    'test/processes/',
    'test/cli/',
    'test/browser/',
    'test/scale/',
    'test/chaos/',
    'test/crash/',
    'test/ha/',
    'test/integration/migrate-concurrent',
    // The formal model's runs: each a quint process using a core for tens of seconds.
    'test/model/',
  ].some((prefix) => f.startsWith(prefix));
// The demo tests start seven processes each (one also its own embedded cluster), and the
// concurrent migrate starts ten at once: beside each other (or beside anything heavy) each
// slows the other down, which failed the demo twice in one day when it still bounded its
// start-up at 15 s. They run last, one at a time.
// The HA tests each run a Patroni cluster (etcd, two PostgreSQL, haproxy) and time failovers:
// also one at a time.
const isStartupTimed = (f: string): boolean =>
  ['test/processes/demo', 'test/integration/migrate-concurrent', 'test/ha/'].some((prefix) =>
    f.startsWith(prefix),
  );
const phases = [
  { files: files.filter((f) => !isProcessTest(f)), concurrency },
  {
    files: files.filter((f) => isProcessTest(f) && !isStartupTimed(f)),
    concurrency: processConcurrency,
  },
  { files: files.filter(isStartupTimed), concurrency: '1' },
].filter((phase) => phase.files.length > 0);

function runPhase(phaseFiles: string[], phaseConcurrency: string): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${phaseConcurrency}`,
      '--test-reporter=spec',
      ...passThrough,
      ...phaseFiles,
    ],
    { stdio: 'inherit', env: { ...process.env, TEST_DATABASE_URL: databaseUrl }, cwd: root },
  );
  return new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
}

let code = 0;
for (const phase of phases) {
  const phaseCode = await runPhase(phase.files, phase.concurrency);
  if (phaseCode !== 0) code = phaseCode;
}
await stopServer();
process.exit(code);
