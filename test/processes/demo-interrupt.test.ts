// Ctrl-C on `npm start`, as a terminal sends it: SIGINT to the demo's whole process group, with
// the demo on its own embedded PostgreSQL (no DATABASE_URL) and tasks in flight. Workers must
// hand their tasks back before the database stops, nothing may log an error on the way out, and
// no process may be left. The demo runs as `npm start` runs it (node with the tsx loader), in a
// scratch working directory, so its `.leasehold/pg` cluster is this test's own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres } from '../../src/embedded/embedded-postgres.js';
import { Leasehold } from '../../src/leasehold.js';
import { waitFor, within } from '../support/wait.js';
import { isAlive, liveProcessesInGroup, processesMentioning } from '../support/pids.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Resolved here: `--import tsx` would be looked up from the scratch directory.
const TSX_LOADER = import.meta.resolve('tsx');
const CLI_ENTRY = join(ROOT, 'src/cli/main.ts');

/** Lines a clean stop must not print: failures, errors, stack frames, pino error levels. */
const ERROR_LINE =
  /failed|Error\b|\bat \S+:\d+|"level":\s*(50|60)|57P01|terminating connection|ECONNREFUSED/;

describe('demo Ctrl-C', () => {
  it('SIGINT to the process group: tasks in flight are handed back, no error is logged, no process is left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-demo-ctrl-c-'));
    // The embedded server runs as the unprivileged `postgres` user, which must enter the directory.
    await chmod(dir, 0o755);
    const env: NodeJS.ProcessEnv = { ...process.env, LEASEHOLD_LOG_LEVEL: 'info' };
    for (const name of ['DATABASE_URL', 'TEST_DATABASE_URL', 'PORT']) delete env[name];
    const demo = spawn(
      process.execPath,
      [
        '--import',
        TSX_LOADER,
        CLI_ENTRY,
        'demo',
        '--port',
        '0',
        '--crash-rate',
        '0',
        // Long claims and a quick generator: every worker soon has a task in hand, and a task
        // not handed back would still be claimed when the database stops.
        '--lease',
        '30000',
        '--generator-interval',
        '300',
      ],
      // Its own process group, like a job started from a shell: `kill(-pid)` is the Ctrl-C.
      { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pgid = demo.pid!;
    const lines: string[] = [];
    for (const stream of [demo.stdout, demo.stderr]) {
      let buffer = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffer += chunk;
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        lines.push(...parts);
      });
    }
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      demo.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const output = (): string => lines.join('\n');
    const dataDir = join(dir, '.leasehold/pg');
    let lh: Leasehold | undefined;
    let postmaster: number | undefined;
    try {
      const [, port] = await waitFor(
        'the demo to print its database',
        () => output().match(/embedded PostgreSQL in \S+ \(port (\d+)\)/),
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      await waitFor('the demo to start', () => /service and dashboard:/.test(output()), {
        timeoutMs: 120_000,
        intervalMs: 100,
      });
      postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

      lh = await Leasehold.connect({
        connectionString: `postgres://postgres:leasehold@127.0.0.1:${port}/postgres`,
        schema: 'leasehold',
      });
      const connected = lh;
      const inFlight = await waitFor(
        'two tasks in flight',
        async () => {
          const claimed = await connected.engine.jobList({
            queue: 'tasks',
            status: 'processing',
            limit: 100,
            offset: 0,
          });
          return claimed.length >= 2 ? claimed : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      await lh.close();
      lh = undefined;

      process.kill(-pgid, 'SIGINT');
      const exit = await within(exited, 90_000, 'the demo exiting after Ctrl-C');

      assert.deepEqual(
        lines.filter((l) => ERROR_LINE.test(l)),
        [],
        `no error on the way out:\n${output()}`,
      );
      assert.equal(exit.code, 0, `demo exit ${JSON.stringify(exit)}:\n${output()}`);
      assert.match(output(), /demo stopped cleanly/);

      // Nothing of the demo is left: not its process group (workers, generators), not the
      // postmaster, not anything started on its scratch directory.
      // The demo waits for its own processes, so none of them may outlive it, not even briefly.
      assert.deepEqual(
        liveProcessesInGroup(pgid).filter((p) => p.command.includes(CLI_ENTRY)),
        [],
        'no leasehold process of the group outlives the demo',
      );
      // The rest of the group is the tsx loader's helpers: an esbuild service, started by a node
      // process whose modules missed tsx's cache (a fresh clone), ends when the pipe from its
      // parent closes, so it may still be exiting as the demo's exit is seen. A process that
      // stays is a leak; 30 s is far beyond the milliseconds such an exit takes on a loaded
      // machine.
      await waitFor('the process group to empty', () => liveProcessesInGroup(pgid).length === 0, {
        timeoutMs: 30_000,
        intervalMs: 100,
      }).catch((error: unknown) => {
        const left = liveProcessesInGroup(pgid).map((p) => `${p.pid}: ${p.command}`);
        throw new Error(`processes left in the demo's group:\n${left.join('\n')}`, {
          cause: error,
        });
      });
      assert.equal(isAlive(postmaster), false, `the postmaster (pid ${postmaster}) has stopped`);
      assert.deepEqual(processesMentioning(dir), [], 'no process runs on the scratch directory');

      // Every task that was in flight was handed back (pending again) or finished: none is still
      // claimed, left for its claim to expire on the next start.
      const server = await startEmbeddedPostgres({ dataDir, persistent: true });
      try {
        const after = await Leasehold.connect({
          connectionString: server.connectionString,
          schema: 'leasehold',
        });
        try {
          const stillClaimed = await after.engine.jobList({
            queue: 'tasks',
            status: 'processing',
            limit: 100,
            offset: 0,
          });
          assert.deepEqual(
            stillClaimed.map((j) => `${j.id} claimed by ${j.claimedBy}`),
            [],
            'no task is left claimed',
          );
          for (const job of inFlight) {
            const now = await after.engine.jobGet({ id: job.id });
            assert.ok(
              now && (now.status === 'pending' || now.status === 'completed'),
              `task ${job.id} was handed back or completed, not ${now?.status}`,
            );
          }
        } finally {
          await after.close();
        }
      } finally {
        await server.stop();
      }
    } finally {
      await lh?.close().catch(() => {});
      // Whatever a failed run left behind goes, so it cannot disturb the next test.
      if (demo.exitCode === null && demo.signalCode === null) process.kill(-pgid, 'SIGKILL');
      if (postmaster !== undefined && isAlive(postmaster)) {
        process.kill(postmaster, 'SIGKILL');
        await waitFor('the postmaster to go', () => !isAlive(postmaster!), { timeoutMs: 30_000 });
      }
      await rm(dir, { recursive: true, force: true, maxRetries: 5 }).catch(() => {});
    }
  });
});
