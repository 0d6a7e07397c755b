/**
 * The lease statements through pgbench (when it is installed): the same SQL leasehold runs,
 * from 8 clients on 2 threads with prepared statements, each client on its own resource
 * (`'r' || :client_id`). It is the floor with no JavaScript at all on the client side.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { leaseQueries } from '../../src/engine/postgres/lease-queries.js';
import { dropSchema } from '../lib/database.js';
import { leaseSchema } from './raw-sql.js';

const run = promisify(execFile);
const CLIENTS = 8;

/** pgbench's version (`15.18`), or undefined when it is not on the PATH. */
export async function pgbenchVersion(): Promise<string | undefined> {
  try {
    const line = (await run('pgbench', ['--version'])).stdout.trim();
    return line.match(/\d+(\.\d+)+/)?.[0] ?? line;
  } catch {
    return undefined;
  }
}

/** One statement on one line, its `$n` parameters replaced by pgbench expressions. */
function script(sql: string, params: readonly string[]): string {
  return sql
    .replace(/\$(\d+)/g, (_, n: string) => `(${params[Number(n) - 1]!})`)
    .replace(/\s+/g, ' ')
    .trim();
}

const RESOURCE = `'r' || :client_id::text`;
const HOLDER = `'h' || :client_id::text`;

async function pgbench(url: string, seconds: number, body: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-pgbench-'));
  try {
    const file = join(dir, 'script.sql');
    await writeFile(file, `${body}\n`);
    const { stdout } = await run('pgbench', [
      '--no-vacuum',
      `--client=${CLIENTS}`,
      '--jobs=2',
      `--time=${Math.max(1, Math.round(seconds))}`,
      '--protocol=prepared',
      `--file=${file}`,
      url,
    ]);
    const tps = stdout.match(/tps = ([\d.]+)/);
    if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`);
    return Number(tps[1]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Acquire+release pairs/s and renews/s, each over `seconds` (at least 1 s, pgbench counts whole seconds). */
export async function pgbenchLeaseThroughput(
  url: string,
  seconds: number,
): Promise<{ pairs: number; renews: number }> {
  const schema = await leaseSchema(url);
  const sql = leaseQueries(`"${schema}"`);
  try {
    const pairs = await pgbench(
      url,
      seconds,
      [
        `${script(sql.LeaseAcquire, [RESOURCE, HOLDER, '30000', 'NULL', 'NULL'])} \\gset`,
        `${script(sql.LeaseRelease, [RESOURCE, HOLDER, ':token', 'NULL'])};`,
      ].join('\n'),
    );
    // Each client renews its own live lease: acquired here first, on fresh resources (token 1).
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (let i = 0; i < CLIENTS; i++)
        await client.query(sql.LeaseAcquire, [`q${i}`, `h${i}`, 600_000, null, null]);
    } finally {
      await client.end();
    }
    const renews = await pgbench(
      url,
      seconds,
      `${script(sql.LeaseRenew, [`'q' || :client_id::text`, HOLDER, '1', '600000', 'NULL'])};`,
    );
    return { pairs, renews };
  } finally {
    await dropSchema(url, schema);
  }
}
