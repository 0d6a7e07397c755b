/**
 * A library process must never crash because the database ended its connections. PostgreSQL
 * ends a backend with an ErrorResponse (SQLSTATE 57P01, "terminating connection due to
 * administrator command") and then closes the socket; pg turns that into an 'error' event on
 * the client, which kills the process when no one listens, and a rejection that no one awaits
 * does the same. The chaos harness's `terminate-backend` fault found such a crash in its worker.
 *
 * Here a worker process built like the chaos role (a NOTIFY listener, a handler completing its
 * job in its own transaction, a maintainer taking its advisory lock every 50 ms) has all its
 * backends terminated over and over while jobs keep coming. It runs in a database of its own,
 * so the terminations reach only its connections (other test files share the server). It must
 * still be alive afterwards, print no uncaught error, and go on completing jobs.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { startScript, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, testDatabaseUrl } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/terminated-worker.ts', import.meta.url).pathname;
/** How long the backends keep being terminated, and how often. */
const FAULT_PHASE_MS = 15_000;
const TERMINATE_EVERY_MS = [5, 120] as const;
const CRASH_SIGNS = /Node\.js v\d|Uncaught|Unhandled|triggerUncaughtException/;

function completions(proc: CliProcess): number {
  return proc.lines.filter((l) => l.includes('"event":"completed"')).length;
}

async function withOwnDatabase<T>(fn: (url: string, admin: pg.Pool) => Promise<T>): Promise<T> {
  const serverUrl = await testDatabaseUrl();
  const name = `lh_terminated_${Math.random().toString(36).slice(2, 8)}`;
  const server = new pg.Client({ connectionString: serverUrl });
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // Our own connections are named apart from the library's, which the terminations pick out.
  const admin = new pg.Pool({
    connectionString: url.toString(),
    max: 3,
    application_name: 'terminator',
  });
  admin.on('error', () => {});
  try {
    return await fn(url.toString(), admin);
  } finally {
    await admin.end().catch(() => {});
    await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await server.end();
  }
}

describe('terminated backends', () => {
  it('a worker with a maintainer and a listener survives its backends being terminated again and again', () =>
    withOwnDatabase(async (url, admin) => {
      const schema = 'leasehold';
      const engine = new PostgresEngine({ pool: admin, schema });
      await engine.migrate();
      await admin.query(
        `CREATE TABLE "${schema}".effects (job_id bigint NOT NULL, generation bigint NOT NULL)`,
      );
      const queue = Leasehold.fromEngine(engine).queue('work');
      const proc = startScript(FIXTURE, [], { DATABASE_URL: url, SCHEMA: schema });
      try {
        await proc.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS);

        let faulty = true;
        let terminated = 0;
        const producing = (async () => {
          for (let i = 0; faulty; i++) {
            await queue.enqueue({ workMs: 10 + (i % 8) * 15 });
            await sleep(20);
          }
        })();
        const terminating = (async () => {
          const [min, max] = TERMINATE_EVERY_MS;
          while (faulty) {
            const { rows } = await admin.query<{ ended: boolean }>(
              `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
                WHERE datname = current_database() AND application_name LIKE 'leasehold%'
                  AND pid <> pg_backend_pid()`,
            );
            terminated += rows.filter((r) => r.ended).length;
            await sleep(min + Math.random() * (max - min));
          }
        })();
        const started = performance.now();
        while (performance.now() - started < FAULT_PHASE_MS && proc.child.exitCode === null)
          await sleep(100);
        faulty = false;
        await Promise.all([producing, terminating]);
        assert.ok(terminated > 20, `backends were terminated (${terminated})`);

        // The process lives on, and keeps working once the database lets it.
        const before = completions(proc);
        await queue.enqueueMany(Array.from({ length: 5 }, () => ({ payload: { workMs: 5 } })));
        const deadline = performance.now() + EVENT_TIMEOUT_MS;
        while (
          completions(proc) < before + 5 &&
          proc.child.exitCode === null &&
          performance.now() < deadline
        )
          await sleep(100);
        const crash = proc.lines.filter((l) => CRASH_SIGNS.test(l));
        assert.equal(
          proc.child.exitCode,
          null,
          `the worker process died:\n${proc.lines.slice(-40).join('\n')}`,
        );
        assert.deepEqual(crash, [], `the worker printed an uncaught error`);
        assert.ok(
          completions(proc) >= before + 5,
          `the worker completes jobs after the faults (${completions(proc)} vs ${before} + 5)`,
        );
      } finally {
        proc.kill('SIGKILL');
        await proc.exited();
        await engine.close();
      }
    }));
});
