/**
 * The SQL fragments every job statement shares: the lifecycle's (job-queries.ts), the
 * administration's (job-admin-queries.ts), the claims' (claim-queries.ts), enqueue's
 * (enqueue-queries.ts) and the flows' and steps'. They live apart from the statements so that
 * each statement module imports them, not one another. Parameters are always bound; the quoted
 * schema is the only spliced text. Every time comparison reads `coalesce($now, now())`, so the
 * database clock decides unless a test pins it.
 *
 * Batch statements take their rows as parallel arrays (`unnest`) or one jsonb array
 * (`jsonb_to_recordset`), so a batch of any size is one statement and one round trip. Their
 * input carries an ordinal `o`, so answers come back in input order.
 *
 * Statements that make work claimable notify inline, once per statement and queue:
 * `pg_notify($channel, 'jobs|' || queue)` over the DISTINCT queues of the rows changed. A
 * partitioned job that finishes (completed, dead, cancelled, deleted while pending) lets the
 * next job of its partition run, so it wakes its queue too.
 *
 * Statements that finish or delete jobs also announce the waited-for ones among them
 * (`finishedNotified`, decision 0249): one `job-finished` notification naming their ids, sent
 * only when the statement finished at least one job someone waits for, so the completion of a
 * job nobody waits for pays no NOTIFY.
 */
import { FINISHED_IDS_MAX, JOBS_TOPIC, JOB_FINISHED_TOPIC } from '../jobs.js';
import { MS } from './sql-units.js';

/** The jobs columns a Job is mapped from (job-rows.ts), in the order statements return them. */
export const JOB_COLUMNS = [
  'id',
  'queue',
  'type',
  'key',
  'payload',
  'headers',
  'partition_key',
  'priority',
  'status',
  'attempts',
  'max_attempts',
  'available_at',
  'claimed_by',
  'claimed_at',
  'lease_expires_at',
  'generation',
  'result',
  'last_error',
  'errors',
  'created_at',
  'updated_at',
  'finished_at',
  'timeout_ms',
  'progress',
  'parent_id',
  'renewals',
  'renewed_at',
] as const;

export type JobColumn = (typeof JOB_COLUMNS)[number];

/** JOB_COLUMNS qualified by a table alias, for a SELECT list or RETURNING. */
export const jobColumns = (a: string): string => JOB_COLUMNS.map((c) => `${a}.${c}`).join(', ');

export const CLOCK = (param: string): string =>
  `WITH clock AS (SELECT coalesce(${param}::timestamptz, now()) AS now)`;

export { MS };

/** Failed attempts kept on a job (core/types JobAttemptError): the newest 20. */
const ERRORS_KEPT = 20;

/**
 * `j.errors` with one more `{attempt, at, error, worker, token, renewals}` entry appended,
 * keeping the newest ERRORS_KEPT. `at` is written as an ISO instant in UTC with milliseconds, as
 * a Date prints. `worker`, `token` and `renewals` are the failed claim's (the row's values
 * before this update), so a job's history names every claim that failed, in the write that
 * happens anyway. Shared by a worker's failure (JobFail) and the rescuer's (JobRescueExpired).
 */
export const appendError = (error: string): string => `(
  SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]'::jsonb)
  FROM jsonb_array_elements(j.errors || jsonb_build_array(jsonb_build_object(
         'attempt', j.attempts,
         'at', to_char(clock.now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         'error', ${error},
         'worker', j.claimed_by,
         'token', j.generation,
         'renewals', j.renewals))) WITH ORDINALITY AS e(value, n)
  WHERE e.n > jsonb_array_length(j.errors) + 1 - ${ERRORS_KEPT})`;

/**
 * A CTE that notifies `jobs|<queue>` once per distinct queue of `source` rows matching `where`.
 * A SELECT CTE runs only when referenced, so every statement using it joins `notified`.
 */
export const notified = (channel: string, source: string, where = 'true'): string =>
  `notified AS (
    SELECT count(pg_notify(${channel}, '${JOBS_TOPIC}|' || w.queue)) AS n
    FROM (SELECT DISTINCT queue FROM ${source} WHERE ${where}) w)`;

/**
 * A CTE that notifies `job-finished|<ids>` once for the `source` rows matching `where` that are
 * waited for (their `waited` column), and not at all when there are none: the HAVING leaves no
 * row to notify for. Every statement using it joins `finished_notified`.
 */
export const finishedNotified = (channel: string, source: string, where = 'true'): string =>
  `finished_notified AS (
    SELECT count(pg_notify(${channel}, '${JOB_FINISHED_TOPIC}|' || w.ids)) AS n
    FROM (
      SELECT CASE WHEN count(*) > ${FINISHED_IDS_MAX} THEN '' ELSE string_agg(id::text, ',') END AS ids
      FROM ${source} WHERE waited AND (${where}) HAVING count(*) > 0
    ) w)`;

/** Jobs that hold their dedup key: a flow's waiting parent too (decision 0255). */
export const LIVE = "('pending', 'processing', 'waiting')";
export const FINAL = "('completed', 'dead', 'cancelled')";

/** Rows (of a RETURNING with `ready`) that wake their queue: claimable now, or a partition freed. */
export const READY_OR_PARTITION_FREED =
  "(status = 'pending' AND ready) OR (status = 'dead' AND partition_key IS NOT NULL) OR slot IS NOT NULL";

/** Rows (of a RETURNING) that finished and so may let another job run: a partition's or a slot's. */
export const SLOT_FREED = 'partition_key IS NOT NULL OR slot IS NOT NULL';
