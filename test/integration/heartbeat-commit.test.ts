/**
 * A worker's heartbeat commits without waiting for its WAL flush (postgres-workers.ts,
 * WorkerHeartbeat), while registering, like every job and lease statement, still waits.
 * PostgreSQL 18 counts each backend's WAL writes (`pg_stat_get_backend_io`): a synchronous
 * commit makes its own backend write its WAL out, an asynchronous one leaves that to the WAL
 * writer. A pool of one connection makes the backend ours to read; it asks for synchronous
 * commit, the server's default, which the test cluster turns off.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const ROW = { name: 'w', host: 'h', pid: 1, queues: ['q'], concurrency: 1 };

/** WAL writes done by backend `pid` itself, once it has reported its statistics. */
async function walWrites(pool: pg.Pool, observer: pg.Client, pid: number): Promise<number> {
  // A backend reports its I/O counters when it goes idle after this, at the latest a second on.
  await pool.query('SELECT pg_stat_force_next_flush()');
  await pool.query('SELECT 1');
  const { rows } = await observer.query<{ writes: string | null }>(
    `SELECT sum(writes) AS writes FROM pg_stat_get_backend_io($1) WHERE object = 'wal'`,
    [pid],
  );
  return Number(rows[0]?.writes ?? 0);
}

describe('the worker heartbeat on PostgreSQL', () => {
  it('commits without waiting for the WAL flush; registering still waits', async (t) =>
    withSchema('heartbeat commit', async ({ schema, url }) => {
      const observer = new pg.Client({ connectionString: url });
      await observer.connect();
      const pool = new pg.Pool({
        connectionString: url,
        max: 1,
        options: '-c synchronous_commit=on',
      });
      const engine = new PostgresEngine({ pool, schema });
      try {
        const version = Number(
          (await observer.query<{ v: string }>('SHOW server_version_num')).rows[0]!.v,
        );
        if (version < 180_000) {
          t.skip(`needs PostgreSQL 18's per-backend I/O statistics; this server is ${version}`);
          return;
        }
        await engine.migrate();
        const pid = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!
          .pid;

        const beforeRegister = await walWrites(pool, observer, pid);
        for (let i = 0; i < 5; i++) await engine.workerRegister({ id: `w${i}`, ...ROW });
        const registerWrites = (await walWrites(pool, observer, pid)) - beforeRegister;
        // The control: a synchronous commit is counted here, so the count below can speak.
        assert.ok(registerWrites >= 5, `5 registrations wrote WAL ${registerWrites} times`);

        const beforeHeartbeats = await walWrites(pool, observer, pid);
        for (let i = 0; i < 20; i++) {
          const seen = await engine.workerHeartbeat({ id: `w${i % 5}`, inFlight: i });
          assert.equal(seen?.inFlight, i, 'the heartbeat is still written');
        }
        const heartbeatWrites = (await walWrites(pool, observer, pid)) - beforeHeartbeats;
        assert.ok(heartbeatWrites <= 2, `20 heartbeats wrote WAL ${heartbeatWrites} times`);
        // The setting is the heartbeat transaction's alone, not left on the pooled connection.
        const { rows } = await pool.query<{ synchronous_commit: string }>(
          'SHOW synchronous_commit',
        );
        assert.equal(rows[0]!.synchronous_commit, 'on');
      } finally {
        await engine.close();
        await pool.end();
        await observer.end();
      }
    }));
});
