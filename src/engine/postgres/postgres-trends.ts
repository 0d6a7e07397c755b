/**
 * Trends on PostgreSQL (the `queue_trends` table of migration 0018, decision 0265). One
 * statement records every minute due: it reads only the jobs that may hold an event since the
 * first of them (processing, finished since then, pending again since then: three index
 * ranges), buckets their events by minute, samples the live depth for the current minute, and
 * upserts a row per (minute, queue). Minutes are cut with date_bin, independent of the
 * session's time zone. Jobs deleted as they completed are read from their tallies (migration
 * 0021, decision 0270), which the same statement drops once no record will read them again.
 */
import type { QueueTrendMinute } from '../../core/trends.js';
import type {
  TrendOperations,
  TrendsListParams,
  TrendsPruneParams,
  TrendsRecordParams,
  TrendsRecorded,
} from '../trends.js';
import type { PgContext } from './context.js';
import { CLOCK, MS } from './job-sql.js';
import { MINUTE } from './job-tallies-sql.js';

interface TrendRow {
  minute: Date;
  queue: string;
  completed: number;
  failed: number;
  dead: number;
  started: number;
  pickup_p50_ms: number | null;
  pickup_p99_ms: number | null;
  waiting: number | null;
  pending: number | null;
  processing: number | null;
}

/** The latency a pickup bucket stands for (core/pickup-buckets.ts pickupBucketValue). */
const BUCKET_VALUE = (bucket: string): string =>
  `round((power(2::numeric, (${bucket} + 0.5) / 4) - 1)::numeric, 3)::float8`;

/**
 * core/trends.ts weightedPercentileCont over `ranked` (v, its weight's running total `upto`,
 * the group's total `n`): the values at the two ranks around p·(n−1), interpolated.
 */
const WEIGHTED_PERCENTILE = (p: number): string => {
  const position = `${p} * (r.n - 1)`;
  const at = (rank: string): string => `min(r.v) FILTER (WHERE r.upto > ${rank})`;
  const low = at(`floor(${position})`);
  const high = at(`ceil(${position})`);
  const fraction = `(${p} * (max(r.n) - 1) - floor(${p} * (max(r.n) - 1)))`;
  return `round((${low} + (${high} - ${low}) * ${fraction})::numeric, 3)::float8`;
};

/** A latency in ms, rounded to the microsecond as the memory engine rounds it. */
const PERCENTILE = (p: number): string =>
  `round((percentile_cont(${p}) WITHIN GROUP (ORDER BY t.pickup_ms))::numeric, 3)::float8`;

/** The current minute's depth: 0 for a queue without live jobs; none for a past minute. */
const DEPTH_NOW = {
  waiting: 'CASE WHEN k.minute = b.current THEN coalesce(d.waiting, 0) END',
  pending: 'CASE WHEN k.minute = b.current THEN coalesce(d.pending, 0) END',
  processing: 'CASE WHEN k.minute = b.current THEN coalesce(d.processing, 0) END',
} as const;
const NOW_DEPTH = (status: keyof typeof DEPTH_NOW): string => DEPTH_NOW[status];

const COLUMNS = `minute, queue, completed, failed, dead, started, pickup_p50_ms, pickup_p99_ms,
  waiting, pending, processing`;

const mapRow = (row: TrendRow): QueueTrendMinute => ({
  minute: row.minute,
  queue: row.queue,
  completed: row.completed,
  failed: row.failed,
  dead: row.dead,
  started: row.started,
  pickupP50Ms: row.pickup_p50_ms,
  pickupP99Ms: row.pickup_p99_ms,
  depth:
    row.waiting === null || row.pending === null || row.processing === null
      ? null
      : { waiting: row.waiting, pending: row.pending, processing: row.processing },
});

export class PostgresTrends implements TrendOperations {
  private readonly sql: Record<'TrendsRecord' | 'TrendsList' | 'TrendsPrune', string>;

  constructor(private readonly ctx: PgContext) {
    const s = ctx.quotedSchema;
    this.sql = {
      // $1 max minutes, $2 now
      TrendsRecord: `${CLOCK('$2')},
        bounds AS (
          SELECT ${MINUTE('c.now')} AS current,
                 greatest(${MINUTE('c.now')} - ($1::integer - 1) * interval '1 minute',
                          (SELECT max(minute) FROM ${s}.queue_trends)) AS first
          FROM clock c
        ),
        touched AS (
          SELECT j.queue, j.status, j.claimed_at, j.available_at, j.finished_at, j.errors
            FROM ${s}.jobs j WHERE j.status = 'processing'
          UNION ALL
          SELECT j.queue, j.status, j.claimed_at, j.available_at, j.finished_at, j.errors
            FROM ${s}.jobs j, bounds b
            WHERE j.status IN ('completed', 'dead', 'cancelled') AND j.finished_at >= b.first
          UNION ALL
          SELECT j.queue, j.status, j.claimed_at, j.available_at, j.finished_at, j.errors
            FROM ${s}.jobs j, bounds b
            WHERE j.status = 'pending' AND j.claimed_at IS NOT NULL AND j.updated_at >= b.first
        ),
        finished AS (
          SELECT ${MINUTE('t.finished_at')} AS minute, t.queue,
                 count(*) FILTER (WHERE t.status = 'completed')::integer AS completed,
                 count(*) FILTER (WHERE t.status = 'dead')::integer AS dead
          FROM touched t, bounds b
          WHERE t.status IN ('completed', 'dead') AND t.finished_at >= b.first
          GROUP BY 1, 2
        ),
        starts AS (
          SELECT ${MINUTE('t.claimed_at')} AS minute, t.queue,
                 greatest(0, extract(epoch FROM t.claimed_at - t.available_at) * 1000)::float8 AS pickup_ms
          FROM touched t, bounds b
          WHERE t.status <> 'pending' AND t.claimed_at >= b.first
        ),
        exact AS (
          SELECT t.minute, t.queue, count(*)::integer AS started,
                 ${PERCENTILE(0.5)} AS p50, ${PERCENTILE(0.99)} AS p99
          FROM starts t GROUP BY 1, 2
        ),
        -- What deleted jobs left (decision 0270): each event is on a job or here, never both.
        tallies AS (
          SELECT t.minute, t.queue, t.event, t.bucket, sum(t.jobs) AS jobs
          FROM ${s}.job_tallies t, bounds b
          WHERE t.minute >= b.first AND t.minute <= b.current
          GROUP BY 1, 2, 3, 4
        ),
        tally_counts AS (
          SELECT t.minute, t.queue,
                 coalesce(sum(t.jobs) FILTER (WHERE t.event = 'completed'), 0)::integer AS completed,
                 coalesce(sum(t.jobs) FILTER (WHERE t.event = 'failed'), 0)::integer AS failed
          FROM tallies t GROUP BY 1, 2
        ),
        -- Where deleted jobs started too: their buckets beside the starts still on jobs.
        mixed AS (
          SELECT t.minute, t.queue, ${BUCKET_VALUE('t.bucket')} AS v, t.jobs AS w
            FROM tallies t WHERE t.event = 'started'
          UNION ALL
          SELECT st.minute, st.queue, st.pickup_ms, 1 FROM starts st
            WHERE EXISTS (SELECT 1 FROM tallies t WHERE t.event = 'started'
                            AND t.minute = st.minute AND t.queue = st.queue)
        ),
        ranked AS (
          SELECT m.minute, m.queue, m.v,
                 sum(m.w) OVER (PARTITION BY m.minute, m.queue ORDER BY m.v
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto,
                 sum(m.w) OVER (PARTITION BY m.minute, m.queue) AS n
          FROM mixed m
        ),
        weighted AS (
          SELECT r.minute, r.queue, max(r.n)::integer AS started,
                 ${WEIGHTED_PERCENTILE(0.5)} AS p50, ${WEIGHTED_PERCENTILE(0.99)} AS p99
          FROM ranked r GROUP BY 1, 2
        ),
        started AS (
          SELECT w.minute, w.queue, w.started, w.p50, w.p99 FROM weighted w
          UNION ALL
          SELECT e.minute, e.queue, e.started, e.p50, e.p99 FROM exact e
            WHERE NOT EXISTS (SELECT 1 FROM weighted w WHERE w.minute = e.minute AND w.queue = e.queue)
        ),
        -- Tallies of minutes no record will cover again have done their work (one held by a
        -- caller's open transaction is left for the next record).
        dropped AS (
          DELETE FROM ${s}.job_tallies t
          WHERE (t.minute, t.queue, t.backend, t.event, t.bucket) IN (
            SELECT x.minute, x.queue, x.backend, x.event, x.bucket
            FROM ${s}.job_tallies x, bounds b WHERE x.minute < b.first
            FOR UPDATE OF x SKIP LOCKED)
        ),
        failures AS (
          SELECT ${MINUTE("(e.value->>'at')::timestamptz")} AS minute, t.queue,
                 count(*)::integer AS failed
          FROM touched t, bounds b,
               jsonb_array_elements(t.errors) WITH ORDINALITY AS e(value, n)
          WHERE (e.value->>'at')::timestamptz >= b.first
            -- a dead job's final failure is its death, counted as dead
            AND NOT (t.status = 'dead' AND e.n = jsonb_array_length(t.errors))
          GROUP BY 1, 2
        ),
        depth AS (
          SELECT d.queue, sum(d.waiting)::integer AS waiting, sum(d.pending)::integer AS pending,
                 sum(d.processing)::integer AS processing
          FROM (
            SELECT j.queue, count(*) AS waiting, 0 AS pending, 0 AS processing
              FROM ${s}.jobs j WHERE j.status = 'waiting' GROUP BY j.queue
            UNION ALL
            SELECT j.queue, 0, count(*), 0 FROM ${s}.jobs j WHERE j.status = 'pending' GROUP BY j.queue
            UNION ALL
            SELECT j.queue, 0, 0, count(*) FROM ${s}.jobs j WHERE j.status = 'processing' GROUP BY j.queue
          ) d GROUP BY d.queue
        ),
        keys AS (
          SELECT minute, queue FROM finished
          UNION SELECT minute, queue FROM started
          UNION SELECT minute, queue FROM failures
          UNION SELECT minute, queue FROM tally_counts
          UNION SELECT b.current, d.queue FROM depth d, bounds b
          -- rows of the minute under way get its depth now, though their queue emptied
          UNION SELECT t.minute, t.queue FROM ${s}.queue_trends t, bounds b WHERE t.minute = b.current
        ),
        written AS (
          INSERT INTO ${s}.queue_trends AS q (minute, queue, completed, failed, dead, started,
            pickup_p50_ms, pickup_p99_ms, waiting, pending, processing, recorded_at)
          SELECT k.minute, k.queue, coalesce(f.completed, 0) + coalesce(tc.completed, 0),
                 coalesce(x.failed, 0) + coalesce(tc.failed, 0),
                 coalesce(f.dead, 0), coalesce(st.started, 0), st.p50, st.p99,
                 ${NOW_DEPTH('waiting')}, ${NOW_DEPTH('pending')}, ${NOW_DEPTH('processing')}, c.now
          FROM keys k
          CROSS JOIN bounds b CROSS JOIN clock c
          LEFT JOIN finished f ON f.minute = k.minute AND f.queue = k.queue
          LEFT JOIN started st ON st.minute = k.minute AND st.queue = k.queue
          LEFT JOIN failures x ON x.minute = k.minute AND x.queue = k.queue
          LEFT JOIN tally_counts tc ON tc.minute = k.minute AND tc.queue = k.queue
          LEFT JOIN depth d ON d.queue = k.queue AND k.minute = b.current
          WHERE k.minute >= b.first AND k.minute <= b.current
          ON CONFLICT (minute, queue) DO UPDATE SET
            completed = greatest(q.completed, excluded.completed),
            failed = greatest(q.failed, excluded.failed),
            dead = greatest(q.dead, excluded.dead),
            started = greatest(q.started, excluded.started),
            pickup_p50_ms = CASE WHEN excluded.started >= q.started
                                 THEN excluded.pickup_p50_ms ELSE q.pickup_p50_ms END,
            pickup_p99_ms = CASE WHEN excluded.started >= q.started
                                 THEN excluded.pickup_p99_ms ELSE q.pickup_p99_ms END,
            waiting = coalesce(excluded.waiting, q.waiting),
            pending = coalesce(excluded.pending, q.pending),
            processing = coalesce(excluded.processing, q.processing),
            recorded_at = excluded.recorded_at
          RETURNING 1
        )
      SELECT b.first, b.current, (SELECT count(*) FROM written)::integer AS rows FROM bounds b`,

      // $1 queue or null, $2 from, $3 to
      TrendsList: `SELECT ${COLUMNS} FROM ${s}.queue_trends
        WHERE minute >= $2::timestamptz AND minute < $3::timestamptz
          AND ($1::text IS NULL OR queue = $1::text)
        ORDER BY minute, queue COLLATE "C"`,

      // $1 older than ms, $2 limit, $3 now
      TrendsPrune: `${CLOCK('$3')},
        -- Tallies a record could not drop (no maintainer recorded since), by the same age.
        stale_tallies AS (
          DELETE FROM ${s}.job_tallies t
          WHERE (t.minute, t.queue, t.backend, t.event, t.bucket) IN (
            SELECT x.minute, x.queue, x.backend, x.event, x.bucket FROM ${s}.job_tallies x
            WHERE x.minute < (SELECT now FROM clock) - $1::float8 ${MS}
            FOR UPDATE OF x SKIP LOCKED)
        ),
        doomed AS (
          SELECT t.minute, t.queue FROM ${s}.queue_trends t
          WHERE t.minute < (SELECT now FROM clock) - $1::float8 ${MS}
          ORDER BY t.minute
          LIMIT $2
          FOR UPDATE SKIP LOCKED
        ),
        pruned AS (
          DELETE FROM ${s}.queue_trends t USING doomed d
          WHERE t.minute = d.minute AND t.queue = d.queue
          RETURNING 1
        )
      SELECT count(*)::integer AS pruned FROM pruned`,
    };
  }

  async trendsRecord(p: TrendsRecordParams): Promise<TrendsRecorded> {
    const rows = await this.ctx.query<{ first: Date; current: Date; rows: number }>(
      'TrendsRecord',
      this.sql.TrendsRecord,
      [p.maxMinutes, this.ctx.pinnedNow()],
    );
    const row = rows[0]!;
    return { from: row.first, through: row.current, rows: row.rows };
  }

  async trendsList(p: TrendsListParams): Promise<QueueTrendMinute[]> {
    const rows = await this.ctx.query<TrendRow>('TrendsList', this.sql.TrendsList, [
      p.queue ?? null,
      p.from,
      p.to,
    ]);
    return rows.map(mapRow);
  }

  async trendsPrune(p: TrendsPruneParams): Promise<number> {
    if (p.limit <= 0) {
      this.ctx.assertOpen();
      return 0;
    }
    const rows = await this.ctx.query<{ pruned: number }>('TrendsPrune', this.sql.TrendsPrune, [
      p.olderThanMs,
      p.limit,
      this.ctx.pinnedNow(),
    ]);
    return rows[0]?.pruned ?? 0;
  }
}
