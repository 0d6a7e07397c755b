/**
 * What recording lease terms costs the lease hot path (decision 0267): acquire+release pairs/s
 * (every acquire starts a new term over a released one, so every pair records a term: the
 * worst case) through `pg` on 8 connections running leasehold's own statements, on a schema
 * with migration 19's triggers and on one with them dropped, alternating, each round on fresh
 * schemas. Prints each run and the median ratio with ÷ without. Each pair commits durably, so
 * on a shared disk the rate is mostly fsync and noisy; the run also reads pg_stat_statements
 * (when the server preloads it, as the bench database does) for the acquire's mean execution
 * time and WAL bytes per call, which the trigger's work changes and the disk does not.
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

interface Run {
  rate: number;
  /** The acquire's mean execution time on the server, ms (null without pg_stat_statements). */
  execMs: number | null;
  walBytes: number | null;
}

async function pairs(url: string, history: boolean): Promise<Run> {
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
    const stats = await cs[0]!
      .query('SELECT pg_stat_statements_reset()')
      .then(() => true)
      .catch(() => false);
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
    const counted = await cs[0]!.query<{ terms: string }>(
      `SELECT count(*) AS terms FROM "${schema}".lease_terms`,
    );
    const terms = Number(counted.rows[0]!.terms);
    // The side with the trigger must have recorded (about) every pair; the other none.
    if (history ? terms === 0 : terms !== 0)
      throw new Error(`history ${history} recorded ${terms} terms`);
    if (!stats) return { rate, execMs: null, walBytes: null };
    const [acquire] = (
      await cs[0]!.query<{ exec_ms: number; wal_bytes: string }>(
        `SELECT mean_exec_time AS exec_ms, wal_bytes / calls AS wal_bytes FROM pg_stat_statements
         WHERE query LIKE '%INSERT INTO "${schema}".leases%' ORDER BY calls DESC LIMIT 1`,
      )
    ).rows;
    return {
      rate,
      execMs: acquire?.exec_ms ?? null,
      walBytes: acquire ? Number(acquire.wal_bytes) : null,
    };
  } finally {
    await Promise.all(cs.map((c) => c.end()));
    await dropSchema(url, schema);
  }
}

const db = await startBenchDatabase();
try {
  const off: Run[] = [];
  const on: Run[] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first, so a drift of the machine falls on both sides.
    const order = round % 2 ? [false, true] : [true, false];
    for (const history of order) {
      await checkpoint(db.url);
      const run = await pairs(db.url, history);
      (history ? on : off).push(run);
      console.log(
        `round ${round} history ${history ? 'on ' : 'off'}: ${Math.round(run.rate)} pairs/s, ` +
          `acquire ${run.execMs?.toFixed(4) ?? '?'} ms, ${run.walBytes?.toFixed(0) ?? '?'} WAL bytes`,
      );
    }
  }
  const ratio = (pick: (r: Run) => number | null): string => {
    const ratios = on.map((r, i) => (pick(r) ?? NaN) / (pick(off[i]!) ?? NaN));
    return `per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(3)}`;
  };
  console.log(`pairs/s on ÷ off: ${ratio((r) => r.rate)}`);
  console.log(`acquire exec time on ÷ off: ${ratio((r) => r.execMs)}`);
  console.log(`acquire WAL bytes on ÷ off: ${ratio((r) => r.walBytes)}`);
} finally {
  await db.stop();
}
