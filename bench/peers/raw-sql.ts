/**
 * The raw-SQL baselines: what PostgreSQL itself allows on this machine through `pg` on 8
 * connections, running exactly the statements leasehold runs (taken from lease-queries.ts), or a
 * plain single-row INSERT for the enqueue baseline. leasehold's numbers are reported as ratios to these.
 */
import pg from 'pg';
import { leaseQueries } from '../../src/engine/postgres/lease-queries.js';
import { dropSchema, freshSchema } from '../lib/database.js';
import { timedLoops } from '../lib/loops.js';

async function clients(url: string, n: number): Promise<pg.Client[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
}

/** A schema with leasehold's leases table, created by leasehold's own migrator. */
export async function leaseSchema(url: string): Promise<string> {
  const { PostgresEngine } = await import('../../src/engine/postgres/postgres-engine.js');
  const schema = freshSchema('bench_raw');
  const engine = new PostgresEngine({ connectionString: url, schema, poolSize: 1 });
  await engine.migrate();
  await engine.close();
  return schema;
}

/** Acquire+release pairs per second, `connections` holders each on its own resource. */
export async function rawLeasePairs(
  url: string,
  seconds: number,
  connections = 8,
): Promise<number> {
  const schema = await leaseSchema(url);
  const sql = leaseQueries(`"${schema}"`);
  const cs = await clients(url, connections);
  const pairs = await timedLoops(connections, seconds, async (i) => {
    const c = cs[i]!;
    const acquired = await c.query({
      name: 'acq',
      text: sql.LeaseAcquire,
      values: [`r${i}`, `h${i}`, 30_000, null, null],
    });
    await c.query({
      name: 'rel',
      text: sql.LeaseRelease,
      values: [`r${i}`, `h${i}`, acquired.rows[0].token, null],
    });
  });
  await Promise.all(cs.map((c) => c.end()));
  await dropSchema(url, schema);
  return pairs;
}

/** Renewals per second, `connections` holders each renewing its own live lease. */
export async function rawLeaseRenews(
  url: string,
  seconds: number,
  connections = 8,
): Promise<number> {
  const schema = await leaseSchema(url);
  const sql = leaseQueries(`"${schema}"`);
  const cs = await clients(url, connections);
  const tokens = await Promise.all(
    cs.map(
      async (c, i) =>
        (
          await c.query({
            name: 'acq',
            text: sql.LeaseAcquire,
            values: [`q${i}`, `h${i}`, 600_000, null, null],
          })
        ).rows[0].token,
    ),
  );
  const renews = await timedLoops(connections, seconds, async (i) => {
    await cs[i]!.query({
      name: 'ren',
      text: sql.LeaseRenew,
      values: [`q${i}`, `h${i}`, tokens[i], 600_000, null],
    });
  });
  await Promise.all(cs.map((c) => c.end()));
  await dropSchema(url, schema);
  return renews;
}

/** Acquire+release pairs/s and renews/s, each over `seconds`, on 8 connections. */
export async function rawLeaseThroughput(
  url: string,
  seconds: number,
): Promise<{ pairs: number; renews: number }> {
  return { pairs: await rawLeasePairs(url, seconds), renews: await rawLeaseRenews(url, seconds) };
}

/**
 * Single-row INSERT transactions from `connections` loops for `seconds`, one connection each;
 * rows/s.
 * The row is a jsonb payload in a table with an identity key: the floor of any enqueue. With
 * `notify`, each INSERT also sends a pg_notify in the same statement, as an enqueue does.
 */
export async function rawInserts(
  url: string,
  seconds: number,
  options: { notify: boolean; connections?: number },
): Promise<number> {
  const connections = options.connections ?? 8;
  const schema = freshSchema('bench_ins');
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(
    `CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".t (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload jsonb NOT NULL)`,
  );
  await setup.end();
  const cs = await clients(url, connections);
  const insert = `INSERT INTO "${schema}".t (payload) VALUES ($1)`;
  const text = options.notify
    ? `WITH i AS (${insert} RETURNING id) SELECT pg_notify('${schema}', 'jobs') FROM i`
    : insert;
  try {
    return await timedLoops(connections, seconds, (caller, i) =>
      cs[caller]!.query({ name: 'ins', text, values: [JSON.stringify({ i })] }),
    );
  } finally {
    await Promise.all(cs.map((c) => c.end()));
    await dropSchema(url, schema);
  }
}
