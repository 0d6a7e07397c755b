/**
 * The crashable server itself: it runs with default durability, a committed row survives both
 * kinds of crash, and a value that was never committed is lost (so a crash here really loses
 * what was not flushed, which is what the token tests rely on).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startCrashablePostgres, type CrashablePostgres } from '../support/crashable-postgres.js';

let server: CrashablePostgres;
let serverLog = '';

before(async () => {
  server = await startCrashablePostgres({ onLog: (line) => (serverLog += line) });
});
after(async () => {
  await server?.stop();
});

async function query<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

test('the crashable server runs with fsync, synchronous_commit and full_page_writes on', async () => {
  const rows = await query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings
      WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes') ORDER BY name`,
  );
  assert.deepEqual(rows, [
    { name: 'fsync', setting: 'on' },
    { name: 'full_page_writes', setting: 'on' },
    { name: 'synchronous_commit', setting: 'on' },
  ]);
});

for (const how of ['immediate', 'sigkill'] as const) {
  test(`a committed row survives a crash (${how}) and restart; recovery ran`, async () => {
    await query(`CREATE TABLE IF NOT EXISTS survivors (how text PRIMARY KEY)`);
    await query(`CHECKPOINT`);
    await query(`INSERT INTO survivors VALUES ('${how}')`);
    await server.crash({ how });
    serverLog = '';
    await server.restart();
    // No shutdown checkpoint was written: the server had to replay WAL to get the row back.
    assert.match(serverLog, /not properly shut down; automatic recovery in progress/);
    const rows = await query<{ how: string }>(`SELECT how FROM survivors WHERE how = '${how}'`);
    assert.deepEqual(rows, [{ how }]);
  });
}

test('an uncommitted nextval after a checkpoint is lost by an immediate crash', async () => {
  await query(`CREATE SEQUENCE IF NOT EXISTS probe`);
  const client = new pg.Client({ connectionString: server.connectionString });
  client.on('error', () => {});
  await client.connect();
  await client.query(`SELECT nextval('probe')`);
  await client.query(`CHECKPOINT`);
  await client.query('BEGIN');
  const [{ value }] = (await client.query<{ value: string }>(`SELECT nextval('probe') AS value`))
    .rows as [{ value: string }];
  await server.crash({ how: 'immediate' });
  await client.end().catch(() => {});
  await server.restart();
  const [{ next }] = (await query<{ next: string }>(`SELECT nextval('probe') AS next`)) as [
    { next: string },
  ];
  // The value handed out before the crash comes out again: it was never durable.
  assert.equal(next, value);
});
