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
  type QueueSettings,
} from '../../core/types.js';
import type { PgContext } from './context.js';

interface QueueRow {
  name: string;
  paused: boolean;
  concurrency: number | null;
  per_key_concurrency: number | null;
  rate_limit: number | null;
  rate_per_ms: number | null;
  fairness: QueueSettings['fairness'];
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
    'QueueGet' | 'QueueList' | 'QueueConfigure' | 'QueueDropDefaults' | 'QueueSlotRunning',
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
            updated_at          = excluded.updated_at
          RETURNING ${COLUMNS}
        ),
        woken AS (SELECT pg_notify($4, '${JOBS_TOPIC}|' || $1) AS n)
        SELECT saved.* FROM saved, woken`,
      // $1 queue. Deleted only if still all defaults on the newest version of the row.
      QueueDropDefaults: `DELETE FROM ${s}.queues WHERE name = $1 AND NOT paused
        AND concurrency IS NULL AND per_key_concurrency = 1 AND rate_limit IS NULL
        AND fairness = 'oldest'`,
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
