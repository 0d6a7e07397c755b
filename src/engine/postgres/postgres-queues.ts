/**
 * Queue settings on PostgreSQL (the `queues` table of migration 0008, decision 0239). A change
 * is one upsert computed on the row's newest version, so two concurrent changes of different
 * fields both stay. A row whose settings became the defaults is deleted, so the queue's claims
 * take the plain path again; a new concurrency cap gives the queue's jobs already running
 * slots of their own (-id), so they count against it.
 */
import { JOBS_TOPIC } from '../jobs.js';
import type { QueueOperations, QueueSettingsChange } from '../queues.js';
import {
  defaultQueueSettings,
  isDefaultQueueSettings,
  type JobExplanation,
  type JobStatus,
  type QueueSettings,
} from '../../core/types.js';
import { explainJob } from '../explain.js';
import type { PgContext } from './context.js';
import { MS } from './sql-units.js';

interface QueueRow {
  name: string;
  paused: boolean;
  concurrency: number | null;
  per_key_concurrency: number | null;
  rate_limit: number | null;
  rate_per_ms: number | null;
  fairness: QueueSettings['fairness'];
}

interface ExplainRow extends Omit<QueueRow, 'name'> {
  queue: string;
  configured: string | null;
  status: JobStatus;
  attempts: number;
  available_at: Date;
  now: Date;
  in_flight: number;
  window_starts: Date[];
  older_head: string | null;
  older_live: number;
  younger_head: string | null;
  younger_processing: number;
  served: boolean;
  children_left: number | null;
}

const COLUMNS = 'name, paused, concurrency, per_key_concurrency, rate_limit, rate_per_ms, fairness';

const mapSettings = (row: QueueRow): QueueSettings => ({
  queue: row.name,
  paused: row.paused,
  concurrency: row.concurrency,
  perKeyConcurrency: row.per_key_concurrency,
  rate:
    row.rate_limit === null || row.rate_per_ms === null
      ? null
      : { limit: row.rate_limit, per: row.rate_per_ms },
  fairness: row.fairness,
});

/** A field of the change: its new value when `$2` names it, else the stored one (or default). */
const field = (jsonKey: string, whenNamed: string, otherwise: string): string =>
  `CASE WHEN $2::jsonb ? '${jsonKey}' THEN ${whenNamed} ELSE ${otherwise} END`;

export class PostgresQueues implements QueueOperations {
  private readonly sql: Record<
    | 'QueueGet'
    | 'QueueList'
    | 'QueueConfigure'
    | 'QueueDropDefaults'
    | 'QueueSlotRunning'
    | 'JobExplain',
    string
  >;

  constructor(private readonly ctx: PgContext) {
    const s = ctx.quotedSchema;
    const fresh = {
      paused: field('paused', "($2::jsonb->>'paused')::boolean", 'false'),
      concurrency: field('concurrency', "($2::jsonb->>'concurrency')::integer", 'NULL'),
      perKey: field('perKeyConcurrency', "($2::jsonb->>'perKeyConcurrency')::integer", '1'),
      rateLimit: field('rate', "($2::jsonb->'rate'->>'limit')::integer", 'NULL'),
      ratePer: field('rate', "($2::jsonb->'rate'->>'per')::integer", 'NULL'),
      fairness: field('fairness', "$2::jsonb->>'fairness'", "'oldest'"),
    };
    this.sql = {
      QueueGet: `SELECT ${COLUMNS} FROM ${s}.queues WHERE name = $1`,
      QueueList: `SELECT ${COLUMNS} FROM ${s}.queues ORDER BY name COLLATE "C"`,
      // $1 queue, $2 change jsonb, $3 now, $4 channel. A change of rate keeps the newest
      // starts that fit the new limit, so a lowered limit is in force at once.
      QueueConfigure: `WITH clock AS (SELECT coalesce($3::timestamptz, now()) AS now),
        saved AS (
          INSERT INTO ${s}.queues AS q (name, paused, concurrency, per_key_concurrency,
                                        rate_limit, rate_per_ms, fairness, updated_at)
          SELECT $1, ${fresh.paused}, ${fresh.concurrency}, ${fresh.perKey}, ${fresh.rateLimit},
                 ${fresh.ratePer}, ${fresh.fairness}, clock.now
          FROM clock
          ON CONFLICT (name) DO UPDATE SET
            paused              = ${field('paused', 'excluded.paused', 'q.paused')},
            concurrency         = ${field('concurrency', 'excluded.concurrency', 'q.concurrency')},
            per_key_concurrency = ${field('perKeyConcurrency', 'excluded.per_key_concurrency', 'q.per_key_concurrency')},
            rate_limit          = ${field('rate', 'excluded.rate_limit', 'q.rate_limit')},
            rate_per_ms         = ${field('rate', 'excluded.rate_per_ms', 'q.rate_per_ms')},
            fairness            = ${field('fairness', 'excluded.fairness', 'q.fairness')},
            starts              = ${field(
              'rate',
              `(SELECT coalesce(array_agg(t.at ORDER BY t.at), '{}') FROM (
                  SELECT at FROM unnest(q.starts) AS u(at)
                  ORDER BY at DESC LIMIT coalesce(excluded.rate_limit, 0)) t)`,
              'q.starts',
            )},
            -- the trimmed array is within the new limit in every window: nothing to check
            rate_claim_at       = ${field('rate', 'NULL', 'q.rate_claim_at')},
            updated_at          = excluded.updated_at
          RETURNING ${COLUMNS}
        ),
        woken AS (SELECT pg_notify($4, '${JOBS_TOPIC}|' || $1) AS n)
        SELECT saved.* FROM saved, woken`,
      // $1 queue. Deleted only if still all defaults on the newest version of the row.
      QueueDropDefaults: `DELETE FROM ${s}.queues WHERE name = $1 AND NOT paused
        AND concurrency IS NULL AND per_key_concurrency = 1 AND rate_limit IS NULL
        AND fairness = 'oldest'`,
      // $1 job id, $2 now, $3 queue or null. The facts explain.ts decides from, read as the claim reads them.
      JobExplain: `WITH clock AS (SELECT coalesce($2::timestamptz, now()) AS now),
        j AS (SELECT id, queue, status, attempts, available_at, partition_key, children_left
              FROM ${s}.jobs WHERE id = $1 AND ($3::text IS NULL OR queue = $3))
        SELECT j.queue, j.status, j.attempts, j.available_at, clock.now, j.children_left,
          qs.name AS configured, qs.paused, qs.concurrency, qs.per_key_concurrency,
          qs.rate_limit, qs.rate_per_ms, qs.fairness,
          (SELECT count(*)::integer FROM ${s}.jobs u
            WHERE u.queue = j.queue AND u.slot IS NOT NULL AND u.status = 'processing') AS in_flight,
          (SELECT coalesce(array_agg(t.at ORDER BY t.at), '{}') FROM unnest(qs.starts) AS t(at)
            WHERE t.at > clock.now - qs.rate_per_ms ${MS}) AS window_starts,
          (SELECT min(o.id) FROM ${s}.jobs o WHERE o.queue = j.queue
            AND o.partition_key = j.partition_key AND o.status IN ('pending', 'processing')
            AND o.id < j.id) AS older_head,
          (SELECT count(*)::integer FROM ${s}.jobs o WHERE o.queue = j.queue
            AND o.partition_key = j.partition_key AND o.status IN ('pending', 'processing')
            AND o.id < j.id) AS older_live,
          (SELECT min(o.id) FROM ${s}.jobs o WHERE o.queue = j.queue
            AND o.partition_key = j.partition_key AND o.status = 'processing'
            AND o.id > j.id) AS younger_head,
          (SELECT count(*)::integer FROM ${s}.jobs o WHERE o.queue = j.queue
            AND o.partition_key = j.partition_key AND o.status = 'processing'
            AND o.id > j.id) AS younger_processing,
          EXISTS (SELECT 1 FROM ${s}.workers w
            WHERE w.status = 'alive' AND j.queue = ANY(w.queues)) AS served
        FROM j CROSS JOIN clock LEFT JOIN ${s}.queues qs ON qs.name = j.queue`,
      // $1 queue. Jobs claimed before the cap existed hold no slot: -id counts them outside 0..N-1.
      QueueSlotRunning: `UPDATE ${s}.jobs SET slot = -id
        WHERE queue = $1 AND status = 'processing' AND slot IS NULL`,
    };
  }

  async queueSettingsGet(p: { queue: string }): Promise<QueueSettings> {
    const rows = await this.ctx.query<QueueRow>('QueueGet', this.sql.QueueGet, [p.queue]);
    return rows[0] ? mapSettings(rows[0]) : defaultQueueSettings(p.queue);
  }

  async queueSettingsList(): Promise<QueueSettings[]> {
    const rows = await this.ctx.query<QueueRow>('QueueList', this.sql.QueueList, []);
    return rows.map(mapSettings);
  }

  async jobExplain(p: { id: number; queue?: string }): Promise<JobExplanation | null> {
    const rows = await this.ctx.query<ExplainRow>('JobExplain', this.sql.JobExplain, [
      p.id,
      this.ctx.pinnedNow(),
      p.queue ?? null,
    ]);
    const row = rows[0];
    if (!row) return null;
    const settings: QueueSettings =
      row.configured === null
        ? defaultQueueSettings(row.queue)
        : mapSettings({ ...row, name: row.queue });
    return explainJob({
      status: row.status,
      attempts: row.attempts,
      availableAt: row.available_at,
      now: row.now,
      settings,
      olderLiveHead: row.older_head === null ? null : Number(row.older_head),
      olderLive: row.older_live,
      youngerProcessing: row.younger_processing,
      youngerProcessingHead: row.younger_head === null ? null : Number(row.younger_head),
      inFlight: row.in_flight,
      windowStarts: row.window_starts,
      served: row.served,
      childrenLeft: row.children_left,
    });
  }

  async queueConfigure(p: { queue: string; change: QueueSettingsChange }): Promise<QueueSettings> {
    const rows = await this.ctx.query<QueueRow>('QueueConfigure', this.sql.QueueConfigure, [
      p.queue,
      JSON.stringify(p.change),
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
    ]);
    const settings = mapSettings(rows[0]!);
    if (settings.concurrency !== null)
      await this.ctx.query('QueueSlotRunning', this.sql.QueueSlotRunning, [p.queue]);
    if (isDefaultQueueSettings(settings))
      await this.ctx.query('QueueDropDefaults', this.sql.QueueDropDefaults, [p.queue]);
    return settings;
  }
}
