/**
 * The raw-SQL baselines: what PostgreSQL itself allows on this machine through `pg` on 8
 * connections, running exactly the statements leasehold runs (taken from lease-queries.ts), or a
 * plain INSERT for the enqueue baseline. leasehold's numbers are reported as ratios to these.
 */
import pg from 'pg';
import { leaseQueries } from '../../src/engine/postgres/lease-queries.js';
import { dropSchema, freshSchema } from '../lib/database.js';

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
async function leaseSchema(url: string): Promise<string> {
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
  let pairs = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    cs.map(async (c, i) => {
      const resource = `r${i}`;
      const holder = `h${i}`;
      while (performance.now() < deadline) {
        const acquired = await c.query({
          name: 'acq',
          text: sql.LeaseAcquire,
          values: [resource, holder, 30_000, null, null],
        });
        const token = acquired.rows[0].token;
        await c.query({
          name: 'rel',
          text: sql.LeaseRelease,
          values: [resource, holder, token, null],
        });
        pairs++;
      }
    }),
  );
  await Promise.all(cs.map((c) => c.end()));
  await dropSchema(url, schema);
  return pairs / seconds;
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
  let renews = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    cs.map(async (c, i) => {
      const resource = `r${i}`;
      const holder = `h${i}`;
      const { rows } = await c.query({
        name: 'acq',
        text: sql.LeaseAcquire,
        values: [resource, holder, 600_000, null, null],
      });
      const token = rows[0].token;
      while (performance.now() < deadline) {
        await c.query({
          name: 'ren',
          text: sql.LeaseRenew,
          values: [resource, holder, token, 600_000, null],
        });
        renews++;
      }
    }),
  );
  await Promise.all(cs.map((c) => c.end()));
  await dropSchema(url, schema);
  return renews / seconds;
}

/** Single-row INSERT transactions per second from 8 connections (optionally with pg_notify). */
export async function rawInserts(
  url: string,
  seconds: number,
  notify: boolean,
  connections = 8,
): Promise<number> {
  const schema = freshSchema('bench_ins');
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(
    `CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".t (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload jsonb NOT NULL)`,
  );
  await setup.end();
  const cs = await clients(url, connections);
  const text = notify
    ? `WITH i AS (INSERT INTO "${schema}".t (payload) VALUES ($1) RETURNING id) SELECT pg_notify('bench', 'x') FROM i`
    : `INSERT INTO "${schema}".t (payload) VALUES ($1)`;
  let count = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    cs.map(async (c) => {
      while (performance.now() < deadline) {
        await c.query({ name: notify ? 'insn' : 'ins', text, values: ['{}'] });
        count++;
      }
    }),
  );
  await Promise.all(cs.map((c) => c.end()));
  await dropSchema(url, schema);
  return count / seconds;
}
