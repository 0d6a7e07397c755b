/**
 * What recording lease terms costs the lease hot path (decision 0267): acquire+release pairs/s
 * through `pg` on 8 connections running leasehold's own statements, each pair's acquire
 * starting a new term over a released one (so with recording on, every pair records a term:
 * the worst case), in three modes on fresh schemas, rotating the order each round:
 *
 * - `none`: migration 19's lease trigger dropped (leasehold before the history);
 * - `off`:  the trigger as migrated, disabled (the default);
 * - `on`:   the trigger enabled (`lh.leases.setTermRecording(true)`).
 *
 * Each pair commits durably, so on a shared disk the rate is mostly fsync and noisy; the run
 * also reads pg_stat_statements (the bench database preloads it) for the acquire's mean
 * execution time and WAL bytes per call, which the trigger's work changes and the disk does not.
 *
 *   npx tsx bench/lease-terms-ab.ts [seconds=3] [rounds=9]
 */
import pg from 'pg';
import { PostgresEngine } from '../src/engine/postgres/postgres-engine.js';
import { leaseQueries } from '../src/engine/postgres/lease-queries.js';
import { checkpoint, dropSchema, freshSchema, startBenchDatabase } from './lib/database.js';
import { timedLoops } from './lib/loops.js';

const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 9);
const CONNECTIONS = 8;
const MODES = ['none', 'off', 'on'] as const;
type Mode = (typeof MODES)[number];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Run {
  rate: number;
  /** The acquire's mean execution time on the server, ms (NaN without pg_stat_statements). */
  execMs: number;
  walBytes: number;
}

async function pairs(url: string, mode: Mode): Promise<Run> {
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
  const admin = cs[0]!;
  try {
    if (mode === 'none') await admin.query(`DROP TRIGGER leases_record_term ON "${schema}".leases`);
    if (mode === 'on')
      await admin.query(`ALTER TABLE "${schema}".leases ENABLE TRIGGER leases_record_term`);
    const sql = leaseQueries(`"${schema}"`);
    const stats = await admin
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
    const counted = await admin.query<{ terms: string }>(
      `SELECT count(*) AS terms FROM "${schema}".lease_terms`,
    );
    const terms = Number(counted.rows[0]!.terms);
    // Recording on must have recorded every pair but the first of each connection; else none.
    if (mode === 'on' ? terms === 0 : terms !== 0)
      throw new Error(`mode ${mode} recorded ${terms} terms`);
    if (!stats) return { rate, execMs: NaN, walBytes: NaN };
    const [acquire] = (
      await admin.query<{ exec_ms: number; wal_bytes: string }>(
        `SELECT mean_exec_time AS exec_ms, wal_bytes / calls AS wal_bytes FROM pg_stat_statements
         WHERE query LIKE '%INSERT INTO "${schema}".leases%' ORDER BY calls DESC LIMIT 1`,
      )
    ).rows;
    return {
      rate,
      execMs: acquire?.exec_ms ?? NaN,
      walBytes: acquire ? Number(acquire.wal_bytes) : NaN,
    };
  } finally {
    await Promise.all(cs.map((c) => c.end()));
    await dropSchema(url, schema);
  }
}

const db = await startBenchDatabase();
try {
  const runs: Record<Mode, Run[]> = { none: [], off: [], on: [] };
  for (let round = 0; round < rounds; round++) {
    // Rotate which goes first, so a drift of the machine falls on every mode.
    const order = MODES.map((_, k) => MODES[(k + round) % MODES.length]!);
    for (const mode of order) {
      await checkpoint(db.url);
      const run = await pairs(db.url, mode);
      runs[mode].push(run);
      console.log(
        `round ${round + 1} ${mode.padEnd(4)}: ${Math.round(run.rate)} pairs/s, ` +
          `acquire ${run.execMs.toFixed(4)} ms, ${run.walBytes.toFixed(0)} WAL bytes`,
      );
    }
  }
  for (const mode of ['off', 'on'] as const) {
    const ratio = (pick: (r: Run) => number): string => {
      const ratios = runs[mode].map((r, i) => pick(r) / pick(runs.none[i]!));
      return `median ${median(ratios).toFixed(3)} (per round ${ratios.map((r) => r.toFixed(2)).join(' ')})`;
    };
    console.log(`${mode} ÷ none: pairs/s ${ratio((r) => r.rate)}`);
    console.log(`${mode} ÷ none: acquire exec time ${ratio((r) => r.execMs)}`);
    console.log(`${mode} ÷ none: acquire WAL bytes ${ratio((r) => r.walBytes)}`);
  }
} finally {
  await db.stop();
}
