/**
 * The worker family on PostgreSQL: one row per worker instance, its liveness judged by
 * `last_seen_at` against the database's now (pinned in tests). Each operation is one
 * statement; the family is small enough to keep its SQL here, as controls do.
 */
import type { WorkerInfo, WorkerStatus } from '../../core/types.js';
import type { WorkerOperations, WorkerRegisterParams } from '../workers.js';
import type { PgContext } from './context.js';
import { DURABLE_COMMIT } from './durable-commit.js';
import { mapWorker, type WorkerRow } from './job-rows.js';

const WORKER_COLUMNS =
  'w.id, w.name, w.host, w.pid, w.queues, w.concurrency, w.status, w.started_at, w.last_seen_at, w.in_flight, w.kind';

const CLOCK = (param: string): string =>
  `WITH clock AS (SELECT coalesce(${param}::timestamptz, now()) AS now)`;

interface WorkerQueries {
  WorkerRegister: string;
  WorkerHeartbeat: string;
  WorkerList: string;
  WorkerMarkDead: string;
}

function workerQueries(s: string): WorkerQueries {
  return {
    // $1 id, $2 name, $3 host, $4 pid, $5 queues, $6 concurrency, $7 now, $8 kind.
    // Registering an id seen before brings it back alive, as if it had just started.
    WorkerRegister: `${CLOCK('$7')}
      INSERT INTO ${s}.workers AS w (id, name, host, pid, queues, concurrency, status, started_at,
        last_seen_at, in_flight, kind)
      SELECT $1, $2, $3, $4::integer, $5::text[], $6::integer, 'alive', clock.now, clock.now, 0,
        $8::text
      FROM clock
      ON CONFLICT (id) DO UPDATE SET
        name = excluded.name, host = excluded.host, pid = excluded.pid, queues = excluded.queues,
        concurrency = excluded.concurrency, status = 'alive', started_at = excluded.started_at,
        last_seen_at = excluded.last_seen_at, in_flight = 0, kind = excluded.kind
      RETURNING ${WORKER_COLUMNS}`,

    // $1 id, $2 in flight, $3 status (nullable: unchanged), $4 now.
    // A plain heartbeat commits without waiting for its WAL to reach disk (synchronous_commit
    // off for this transaction only; the WAL writer flushes it within a few hundred ms). It is a
    // hint refreshed every few seconds: one lost in a database crash is replaced by the next,
    // and a worker is judged silent only after several are missing. Waiting for its flush made
    // it queue at the disk with the enqueues and claims of the same moment (decision 0214).
    // A heartbeat that changes the status (draining, stopped) commits durably instead: lost in a
    // crash, a stopped worker would come back as alive until maintenance marked it dead
    // (decision 0217). The stored status is read before the update, under the same snapshot.
    WorkerHeartbeat: `WITH clock AS (
        SELECT coalesce($4::timestamptz, now()) AS now,
          CASE WHEN $3::text IS NULL
                 OR $3::text = (SELECT c.status FROM ${s}.workers c WHERE c.id = $1)
               THEN set_config('synchronous_commit', 'off', true)
               ELSE ${DURABLE_COMMIT} END AS commit_mode
      )
      UPDATE ${s}.workers w SET
        last_seen_at = clock.now, in_flight = $2::integer, status = coalesce($3::text, w.status)
      FROM clock
      WHERE w.id = $1
      RETURNING ${WORKER_COLUMNS}`,

    // $1 status (nullable), $2 limit. In order of first registration.
    WorkerList: `SELECT ${WORKER_COLUMNS} FROM ${s}.workers w
      WHERE $1::text IS NULL OR w.status = $1::text
      ORDER BY w.seq LIMIT $2`,

    // $1 silent for ms, $2 limit, $3 now. Stopped workers said goodbye and are left alone.
    WorkerMarkDead: `${CLOCK('$3')},
      silent AS (
        SELECT w.id FROM ${s}.workers w
        WHERE w.status IN ('alive', 'draining')
          AND w.last_seen_at < (SELECT now FROM clock) - $1::float8 * interval '1 millisecond'
        ORDER BY w.last_seen_at
        LIMIT $2
        FOR UPDATE OF w SKIP LOCKED
      ),
      marked AS (
        UPDATE ${s}.workers w SET status = 'dead'
        WHERE w.id = ANY(ARRAY(SELECT id FROM silent)) -- locked above
        RETURNING 1
      )
      SELECT count(*)::integer AS marked FROM marked`,
  };
}

export class PostgresWorkers implements WorkerOperations {
  private readonly sql: WorkerQueries;

  constructor(private readonly ctx: PgContext) {
    this.sql = workerQueries(ctx.quotedSchema);
  }

  /** Registers, or re-registers an id seen before: alive again, as if it had just started. */
  async workerRegister(p: WorkerRegisterParams): Promise<WorkerInfo> {
    const rows = await this.ctx.query<WorkerRow>('WorkerRegister', this.sql.WorkerRegister, [
      p.id,
      p.name,
      p.host,
      p.pid,
      [...p.queues],
      p.concurrency,
      this.ctx.pinnedNow(),
      p.kind ?? 'library',
    ]);
    return mapWorker(rows[0]!);
  }

  async workerHeartbeat(p: {
    id: string;
    inFlight: number;
    status?: WorkerStatus;
  }): Promise<WorkerInfo | null> {
    const rows = await this.ctx.query<WorkerRow>('WorkerHeartbeat', this.sql.WorkerHeartbeat, [
      p.id,
      p.inFlight,
      p.status ?? null,
      this.ctx.pinnedNow(),
    ]);
    return rows[0] ? mapWorker(rows[0]) : null;
  }

  /** In order of first registration. */
  async workerList(p: { status?: WorkerStatus; limit: number }): Promise<WorkerInfo[]> {
    const rows = await this.ctx.query<WorkerRow>('WorkerList', this.sql.WorkerList, [
      p.status ?? null,
      p.limit,
    ]);
    return rows.map(mapWorker);
  }

  /** Silent means last seen longer than `silentForMs` ago; stopped workers are left alone. */
  async workerMarkDead(p: { silentForMs: number; limit: number }): Promise<number> {
    if (p.limit <= 0) {
      this.ctx.assertOpen();
      return 0;
    }
    const rows = await this.ctx.query<{ marked: number }>(
      'WorkerMarkDead',
      this.sql.WorkerMarkDead,
      [p.silentForMs, p.limit, this.ctx.pinnedNow()],
    );
    return rows[0]?.marked ?? 0;
  }
}
