/**
 * What recording lease terms costs the lease hot path (decision 0267): acquire+release pairs/s
 * (every acquire starts a new term over a released one, so every pair records a term: the
 * worst case) through `pg` on 8 connections running leasehold's own statements, on a schema
 * with migration 19's triggers and on one with them dropped, alternating, each round on fresh
 * schemas. Prints each run and the median ratio with ÷ without.
 *
 *   npx tsx bench/lease-terms-ab.ts [seconds=5] [rounds=7]
 */
import pg from 'pg';
import { PostgresEngine } from '../src/engine/postgres/postgres-engine.js';
import { leaseQueries } from '../src/engine/postgres/lease-queries.js';
import { checkpoint, dropSchema, freshSchema, startBenchDatabase } from './lib/database.js';
import { timedLoops } from './lib/loops.js';

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 7);
const CONNECTIONS = 8;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function pairs(url: string, history: boolean): Promise<number> {
  const schema = freshSchema('bench_terms');
  const engine = new PostgresEngine({ connectionString: url, schema, poolSize: 1 });
  await engine.migrate();
  await engine.close();
  const cs = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  try {
    if (!history) {
      await cs[0]!.query(`DROP TRIGGER leases_record_term ON "${schema}".leases`);
    }
    const sql = leaseQueries(`"${schema}"`);
    const rate = await timedLoops(CONNECTIONS, seconds, async (i) => {
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
    const [{ terms }] = (
      await cs[0]!.query<{ terms: string }>(`SELECT count(*) AS terms FROM "${schema}".lease_terms`)
    ).rows as [{ terms: string }];
    // The side with the trigger must have recorded (about) every pair; the other none.
    if (history ? Number(terms) === 0 : Number(terms) !== 0)
      throw new Error(`history ${history} recorded ${terms} terms`);
    return rate;
  } finally {
    await Promise.all(cs.map((c) => c.end()));
    await dropSchema(url, schema);
  }
}

const db = await startBenchDatabase();
try {
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first, so a drift of the machine falls on both sides.
    const order = round % 2 ? [false, true] : [true, false];
    for (const history of order) {
      await checkpoint(db.url);
      const rate = await pairs(db.url, history);
      (history ? on : off).push(rate);
      console.log(`round ${round} history ${history ? 'on ' : 'off'}: ${Math.round(rate)} pairs/s`);
    }
  }
  const ratios = on.map((r, i) => r / off[i]!);
  console.log(
    `median off ${Math.round(median(off))} pairs/s, on ${Math.round(median(on))} pairs/s; ` +
      `on ÷ off per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(3)}`,
  );
} finally {
  await db.stop();
}
