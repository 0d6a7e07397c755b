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
 *
 * The crash it finds by chance (about one run in three on the old code) is a race in pg-pool's
 * hand-over of a client to a `pool.connect()` waiter; the second test stages it for certain.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { startScript, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, testDatabaseUrl, withSchema } from '../support/database.js';
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

/** Keeps this thread busy: meanwhile the server's answers pile up unread in the socket. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

describe('terminated backends: the hand-over race', () => {
  it('a pooled client freed and handed to a pool.connect() waiter by the same socket read that brings its FATAL does not crash the process', () =>
    withSchema('terminated handover', async (ctx) => {
      // The race the storm above finds by chance, made certain: the last messages of a query
      // and the server's FATAL 57P01 reach the client in one read. The query's end frees the
      // client; pg-pool hands it to the waiting pool.connect() with its own listener already
      // off, the waiter's code runs only a microtask later, and the FATAL is parsed at once.
      const engine = await ctx.engine({ poolSize: 1 });
      const uncaught: unknown[] = [];
      const record = (error: unknown): void => void uncaught.push(error);
      process.prependListener('uncaughtException', record);
      try {
        const { rows } = await engine.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        const pid = rows[0]!.pid;
        const query = engine.pool.query('SELECT 1');
        const waiter = engine.pool.connect();
        // pg-pool hands the idle client to the query on the next tick, which sends it; the tick
        // after that runs before any I/O is read.
        await new Promise((resolve) => process.nextTick(resolve));
        // While this thread is blocked: SELECT 1 is answered, then its backend is terminated
        // (by another process, as this one cannot run its own I/O), and the FATAL follows.
        spin(200);
        execFileSync(
          process.execPath,
          [
            '-e',
            `const pg = require('pg'); const c = new pg.Client(process.argv[1]);
             c.connect().then(() => c.query('SELECT pg_terminate_backend($1)', [Number(process.argv[2])]))
               .then(() => c.end()).catch((e) => { console.error(e); process.exit(1); });`,
            ctx.url,
            String(pid),
          ],
          { cwd: new URL('../..', import.meta.url).pathname, stdio: 'inherit' },
        );
        spin(200);
        await query; // answered before the backend was terminated
        const client = await waiter;
        await assert.rejects(client.query('SELECT 1'), 'the handed-over client is dead');
        client.release(true);
        // Let the socket's close be read too (pg emits a second 'error' then).
        await sleep(100);
        assert.deepEqual(uncaught, [], 'no uncaught error');
        const { rows: after } = await engine.pool.query<{ one: number }>('SELECT 1 AS one');
        assert.equal(after[0]!.one, 1, 'the pool serves a fresh connection');
      } finally {
        process.removeListener('uncaughtException', record);
      }
    }));
});
