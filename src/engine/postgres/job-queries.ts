/**
 * Every SQL statement of the job family but the claims (claim-queries.ts) and enqueue's
 * (enqueue-queries.ts), which share the fragments exported here, named EntityVerb. Parameters are always bound; the quoted schema is
 * the only spliced text. Every time comparison reads
 * `coalesce($now, now())`, so the database clock decides unless a test pins it.
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
import { SCAN_FACTOR } from '../job-admin.js';
import { MS } from './sql-units.js';
import { DEAD_OUTCOME, flowReturning, flowSettled } from './flow-settle-sql.js';
import { tallyRemoved } from './job-tallies-sql.js';

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
 * happens anyway.
 */
const appendError = (error: string): string => `(
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

/**
 * The job is owned by the caller: right worker, right term, still processing. "Processing" is
 * written `lease_expires_at IS NOT NULL` (the same thing, by a CHECK of the table) on purpose:
 * `status = 'processing'` would let the planner scan the whole `jobs_rescue` index instead of
 * looking the ids up (it did, measured: 10 ms with 10k jobs in flight, against 0.1 ms). No
 * extra `id = ANY($2)`: with it, the generic plan of the named statement (used from its sixth
 * run on) became a nested loop re-scanning the unnest per row, O(n²): 100 ms to complete 500
 * jobs instead of 15 (measured with the queue benchmark's probe).
 */
const OWNED = `j.id = r.id AND j.generation = r.generation
  AND j.claimed_by = $1 AND j.lease_expires_at IS NOT NULL`;

/** Jobs that hold their dedup key: a flow's waiting parent too (decision 0255). */
export const LIVE = "('pending', 'processing', 'waiting')";
const FINAL = "('completed', 'dead', 'cancelled')";

/** Rows (of a RETURNING with `ready`) that wake their queue: claimable now, or a partition freed. */
const READY_OR_PARTITION_FREED =
  "(status = 'pending' AND ready) OR (status = 'dead' AND partition_key IS NOT NULL) OR slot IS NOT NULL";

/** Rows (of a RETURNING) that finished and so may let another job run: a partition's or a slot's. */
const SLOT_FREED = 'partition_key IS NOT NULL OR slot IS NOT NULL';

/**
 * The jobs of a JobMatch, for the operations over many jobs: $1 queue, $2 statuses text[],
 * $3 type, $4 key, $5 partition key, $6 created since, $7 created before (each nullable).
 */
const matching = (a: string): string => `${a}.queue = $1::text AND ${a}.status = ANY($2::text[])
  AND ($3::text IS NULL OR ${a}.type = $3::text)
  AND ($4::text IS NULL OR ${a}.key = $4::text)
  AND ($5::text IS NULL OR ${a}.partition_key = $5::text)
  AND ($6::timestamptz IS NULL OR ${a}.created_at >= $6::timestamptz)
  AND ($7::timestamptz IS NULL OR ${a}.created_at < $7::timestamptz)`;

/**
 * One batch of an operation over many jobs (decision 0250). `batch`: the $9 newest matching
 * jobs among the at most SCAN_FACTOR x $9 jobs (of any queue) below id $8, read without locks.
 * The scan is a walk down the primary key, whatever the statistics say: a plan chosen on stale
 * statistics (a million jobs just died, ANALYZE has not run) would otherwise read and sort every
 * job of the status on each batch (measured: 270 ms a batch over 100k jobs, against 5). So a
 * batch costs at most SCAN_FACTOR x $9 rows read, however sparse the matches, and the walk
 * never comes back to a job it passed. `locked`: those of them the operation applies to
 * (`applies`), locked in id order, the order every other statement that waits for job rows
 * locks them in, so a batch cannot deadlock with them; a row changed meanwhile is checked again
 * once its lock is granted (READ COMMITTED), and left out if it no longer matches.
 */
const matchingBatch = (s: string, applies: string): string => `scanned AS MATERIALIZED (
    SELECT j.id, j.queue, j.status, j.type, j.key, j.partition_key, j.created_at FROM ${s}.jobs j
    WHERE ($8::bigint IS NULL OR j.id < $8::bigint)
    ORDER BY j.id DESC
    LIMIT $9::integer * ${SCAN_FACTOR}
  ),
  batch AS (
    SELECT j.id FROM scanned j WHERE ${matching('j')} ORDER BY j.id DESC LIMIT $9::integer
  ),
  locked AS (
    SELECT j.id, j.key FROM ${s}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM batch)) AND ${matching('j')} AND j.status IN ${applies}
    ORDER BY j.id
    FOR UPDATE OF j
  )`;

/**
 * A batch's answer: how many `changed` rows, and where the next batch starts: below the lowest
 * job of a full batch, else below the lowest job scanned if the scan ran its full length, else
 * nowhere (the scan reached the oldest job). `notifiers`: the notifying CTEs it joins, so that
 * they run.
 */
const batchAnswer = (changed: string, notifiers: string): string => `SELECT
    (SELECT count(*) FROM ${changed})::integer AS changed,
    CASE WHEN (SELECT count(*) FROM batch) >= $9::integer THEN (SELECT min(id) FROM batch)
         WHEN (SELECT count(*) FROM scanned) >= $9::integer * ${SCAN_FACTOR} THEN (SELECT min(id) FROM scanned)
    END AS next
  FROM ${notifiers}`;

/** What deleting a job means to its flow (flow-settle-sql.ts): a finished one is only gone. */
const DELETED_OUTCOME = `CASE WHEN x.status IN ${FINAL} THEN 'gone' ELSE 'deleted' END`;

/** Statuses a job may be deleted in: any but processing. */
const DELETABLE = "('waiting', 'pending', 'completed', 'dead', 'cancelled')";

export interface JobQueries {
  JobRenewLeases: string;
  JobProgress: string;
  JobComplete: string;
  JobCompleteRemove: string;
  JobFail: string;
  JobHandBack: string;
  JobCancel: string;
  JobRetry: string;
  JobDelete: string;
  JobRetryMatching: string;
  JobCancelMatching: string;
  JobDeleteMatching: string;
  JobGet: string;
  JobWatch: string;
  JobList: string;
  JobCounts: string;
  JobRescueExpired: string;
  JobPrune: string;
}

export function jobQueries(s: string): JobQueries {
  const cols = jobColumns('j');
  return {
    // $1 worker id, $2 ids bigint[], $3 generations bigint[], $4 ordinals int[], $5 ttl ms, $6 now
    JobRenewLeases: `${CLOCK('$6')},
      renewed AS (
        UPDATE ${s}.jobs j SET lease_expires_at = clock.now + $5::float8 ${MS}, updated_at = clock.now,
          renewals = j.renewals + 1, renewed_at = clock.now
        FROM unnest($2::bigint[], $3::bigint[], $4::integer[]) AS r(id, generation, o), clock
        WHERE ${OWNED} AND j.lease_expires_at > clock.now
        RETURNING j.id, j.lease_expires_at, r.o
      )
      SELECT id, lease_expires_at FROM renewed ORDER BY o`,

    // $1 worker id, $2 ids, $3 generations, $4 progress jsonb[], $5 ordinals, $6 now.
    // Fenced like a renewal: a lease that has run out may be rescued any moment.
    JobProgress: `${CLOCK('$6')},
      reported AS (
        UPDATE ${s}.jobs j SET progress = r.progress, updated_at = clock.now
        FROM unnest($2::bigint[], $3::bigint[], $4::jsonb[], $5::integer[]) AS r(id, generation, progress, o), clock
        WHERE ${OWNED} AND j.lease_expires_at > clock.now
        RETURNING j.id, r.o
      )
      SELECT id FROM reported ORDER BY o`,

    // $1 worker id, $2 ids, $3 generations, $4 results jsonb[], $5 ordinals, $6 now, $7 channel.
    // No expiry test: while the generation is unchanged nobody else has claimed the job.
    JobComplete: `${CLOCK('$6')},
      done AS (
        UPDATE ${s}.jobs j SET
          status = 'completed', result = r.result, finished_at = clock.now,
          lease_expires_at = NULL, updated_at = clock.now
        FROM unnest($2::bigint[], $3::bigint[], $4::jsonb[], $5::integer[]) AS r(id, generation, result, o), clock
        WHERE ${OWNED}
        RETURNING j.id, j.queue, j.partition_key, j.slot, j.waited, r.o, ${flowReturning('j')}
      ),
      ${notified('$7', 'done', SLOT_FREED)},
      ${finishedNotified('$7', 'done')},
      ${flowSettled(s, 'done', "'completed'")}
      SELECT d.id FROM done d, notified, finished_notified, flow_settled ORDER BY d.o`,

    // JobComplete for a worker with `removeOnComplete`: the same guard, the row deleted. $1 worker
    // id, $2 ids, $3 generations, $4 ordinals, $5 now, $6 channel. A DELETE writes no new row
    // version and no index entries: about half the WAL of an UPDATE to completed. What the
    // trends would have read from the row is tallied instead (decision 0270).
    JobCompleteRemove: `${CLOCK('$5')},
      done AS (
        DELETE FROM ${s}.jobs j
        USING unnest($2::bigint[], $3::bigint[], $4::integer[]) AS r(id, generation, o)
        WHERE ${OWNED}
        RETURNING j.id, j.queue, j.partition_key, j.slot, j.waited, r.o, ${flowReturning('j')},
          j.claimed_at, j.available_at, j.errors
      ),
      ${tallyRemoved(s, 'done')},
      ${notified('$6', 'done', SLOT_FREED)},
      ${finishedNotified('$6', 'done')},
      ${flowSettled(s, 'done', "'completed'")}
      SELECT d.id FROM done d, notified, finished_notified, flow_settled ORDER BY d.o`,

    // $1 worker id, $2 ids, $3 generations, $4 errors text[], $5 retry delays ms float8[],
    // $6 final boolean[], $7 ordinals, $8 now, $9 channel
    JobFail: `${CLOCK('$8')},
      failed AS (
        UPDATE ${s}.jobs j SET
          status           = CASE WHEN r.final OR j.attempts >= j.max_attempts THEN 'dead' ELSE 'pending' END,
          available_at     = CASE WHEN r.final OR j.attempts >= j.max_attempts THEN j.available_at
                                  ELSE clock.now + greatest(r.delay_ms, 0) ${MS} END,
          finished_at      = CASE WHEN r.final OR j.attempts >= j.max_attempts THEN clock.now END,
          lease_expires_at = NULL,
          last_error       = r.error,
          errors           = ${appendError('r.error')},
          updated_at       = clock.now
        FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::float8[], $6::boolean[], $7::integer[])
          AS r(id, generation, error, delay_ms, final, o), clock
        WHERE ${OWNED}
        RETURNING j.id, j.queue, j.status, j.partition_key, j.slot, j.waited,
          j.available_at <= clock.now AS ready, r.o, ${flowReturning('j')}
      ),
      ${notified('$9', 'failed', READY_OR_PARTITION_FREED)},
      ${finishedNotified('$9', 'failed', "status = 'dead'")},
      ${flowSettled(s, 'failed', DEAD_OUTCOME)}
      SELECT f.id, f.status FROM failed f, notified, finished_notified, flow_settled ORDER BY f.o`,

    // $1 worker id, $2 ids, $3 generations, $4 ordinals, $5 now, $6 channel.
    // The attempt is given back: a drain is not the job's fault.
    JobHandBack: `${CLOCK('$5')},
      handed AS (
        UPDATE ${s}.jobs j SET
          status = 'pending', available_at = clock.now, attempts = greatest(j.attempts - 1, 0),
          lease_expires_at = NULL, updated_at = clock.now
        FROM unnest($2::bigint[], $3::bigint[], $4::integer[]) AS r(id, generation, o), clock
        WHERE ${OWNED}
        RETURNING j.id, j.queue, r.o
      ),
      ${notified('$6', 'handed')}
      SELECT h.id FROM handed h, notified ORDER BY h.o`,

    // $1 id, $2 now, $3 channel. A job already final comes back unchanged.
    JobCancel: `${CLOCK('$2')},
      cancelled AS (
        UPDATE ${s}.jobs j SET
          status = 'cancelled', finished_at = clock.now, lease_expires_at = NULL, updated_at = clock.now
        FROM clock
        WHERE j.id = $1 AND j.status IN ${LIVE}
        RETURNING ${cols}, j.waited, j.children_left, j.parent_policy
      ),
      ${notified('$3', 'cancelled', 'partition_key IS NOT NULL')},
      ${finishedNotified('$3', 'cancelled')},
      ${flowSettled(s, 'cancelled', "'cancelled'")}
      SELECT ${jobColumns('c')} FROM cancelled c, notified, finished_notified, flow_settled
      UNION ALL
      SELECT ${cols} FROM ${s}.jobs j WHERE j.id = $1 AND NOT EXISTS (SELECT 1 FROM cancelled)`,

    // $1 id, $2 now, $3 channel. A live job with the same key makes `jobs_live_key` refuse it.
    JobRetry: `${CLOCK('$2')},
      retried AS (
        UPDATE ${s}.jobs j SET
          status = 'pending', attempts = 0, available_at = clock.now, result = NULL,
          finished_at = NULL, lease_expires_at = NULL, updated_at = clock.now
        FROM clock
        WHERE j.id = $1 AND j.status IN ${FINAL}
        RETURNING ${cols}
      ),
      ${notified('$3', 'retried')}
      SELECT r.* FROM retried r, notified`,

    // $1 id, $2 channel. A pending partition head leaving lets the next job of its partition run.
    JobDelete: `WITH gone AS (
        DELETE FROM ${s}.jobs j WHERE j.id = $1 AND j.status <> 'processing'
        RETURNING j.id, j.queue, j.status, j.partition_key, j.waited, ${flowReturning('j')}
      ),
      ${notified('$2', 'gone', "status = 'pending' AND partition_key IS NOT NULL")},
      ${finishedNotified('$2', 'gone')},
      ${flowSettled(s, 'gone', DELETED_OUTCOME, 'now()')}
      SELECT count(*)::integer AS deleted FROM gone, notified, finished_notified, flow_settled`,

    // $1-$7 the match (see `matching`), $8 before id, $9 limit, $10 now, $11 channel. A job
    // whose key a live job holds stays as it is (the unique index would refuse the whole
    // statement); of the batch's jobs sharing a key, the newest is retried.
    JobRetryMatching: `${CLOCK('$10')},
      ${matchingBatch(s, FINAL)},
      keyed AS (
        SELECT DISTINCT ON (l.key) l.id FROM locked l
        WHERE l.key IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM ${s}.jobs k WHERE k.queue = $1::text AND k.key = l.key AND k.status IN ${LIVE})
        ORDER BY l.key, l.id DESC
      ),
      retried AS (
        UPDATE ${s}.jobs j SET
          status = 'pending', attempts = 0, available_at = clock.now, result = NULL,
          finished_at = NULL, lease_expires_at = NULL, updated_at = clock.now
        FROM clock
        WHERE j.id = ANY(ARRAY(SELECT id FROM locked WHERE key IS NULL UNION ALL SELECT id FROM keyed))
        RETURNING j.queue
      ),
      ${notified('$11', 'retried')}
      ${batchAnswer('retried', 'notified')}`,

    // $1-$9 as JobRetryMatching, $10 now, $11 channel. A running job's worker learns it at its
    // next renewal, as with JobCancel.
    JobCancelMatching: `${CLOCK('$10')},
      ${matchingBatch(s, LIVE)},
      cancelled AS (
        UPDATE ${s}.jobs j SET
          status = 'cancelled', finished_at = clock.now, lease_expires_at = NULL, updated_at = clock.now
        FROM clock
        WHERE j.id = ANY(ARRAY(SELECT id FROM locked))
        RETURNING j.id, j.queue, j.partition_key, j.slot, j.waited, ${flowReturning('j')}
      ),
      ${notified('$11', 'cancelled', SLOT_FREED)},
      ${finishedNotified('$11', 'cancelled')},
      ${flowSettled(s, 'cancelled', "'cancelled'")}
      ${batchAnswer('cancelled', 'notified, finished_notified, flow_settled')}`,

    // $1-$9 as JobRetryMatching, $10 channel.
    JobDeleteMatching: `WITH ${matchingBatch(s, DELETABLE)},
      gone AS (
        DELETE FROM ${s}.jobs j WHERE j.id = ANY(ARRAY(SELECT id FROM locked))
        RETURNING j.id, j.queue, j.status, j.partition_key, j.waited, ${flowReturning('j')}
      ),
      ${notified('$10', 'gone', "status = 'pending' AND partition_key IS NOT NULL")},
      ${finishedNotified('$10', 'gone')},
      ${flowSettled(s, 'gone', DELETED_OUTCOME, 'now()')}
      ${batchAnswer('gone', 'notified, finished_notified, flow_settled')}`,

    // $1 id
    JobGet: `SELECT ${cols} FROM ${s}.jobs j WHERE j.id = $1`,

    // $1 id. The UPDATE locks the newest row version, so the answer is the job as committed
    // last, and a finishing statement that commits after this one sees the mark and notifies.
    JobWatch: `UPDATE ${s}.jobs j SET waited = true WHERE j.id = $1 RETURNING ${cols}`,

    // $1 queue, $2 status, $3 partition key (each nullable), $4 limit, $5 offset. Newest first.
    JobList: `SELECT ${cols} FROM ${s}.jobs j
      WHERE ($1::text IS NULL OR j.queue = $1::text)
        AND ($2::text IS NULL OR j.status = $2::text)
        AND ($3::text IS NULL OR j.partition_key = $3::text)
      ORDER BY j.id DESC LIMIT $4 OFFSET $5`,

    // By queue (byte order, as JavaScript sorts), then lifecycle order.
    JobCounts: `SELECT queue, status, count(*) AS count FROM ${s}.jobs
      GROUP BY queue, status
      ORDER BY queue COLLATE "C",
        array_position(ARRAY['waiting', 'pending', 'processing', 'completed', 'dead', 'cancelled'], status)`,

    // $1 limit, $2 backoff base ms, $3 backoff cap ms, $4 error text, $5 now, $6 channel.
    // The delay is core/backoff's full jitter, drawn per job: floor(random * (ceiling + 1)).
    JobRescueExpired: `${CLOCK('$5')},
      expired AS (
        SELECT j.id FROM ${s}.jobs j
        WHERE j.status = 'processing' AND j.lease_expires_at <= (SELECT now FROM clock)
        ORDER BY j.lease_expires_at, j.id
        LIMIT $1
        FOR UPDATE OF j SKIP LOCKED
      ),
      rescued AS (
        UPDATE ${s}.jobs j SET
          status           = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'pending' END,
          available_at     = CASE WHEN j.attempts >= j.max_attempts THEN j.available_at
                                  ELSE clock.now + floor(random() * (least($3::float8, $2::float8
                                    * power(2::float8, least(greatest(j.attempts - 1, 0), 60))) + 1)) ${MS} END,
          finished_at      = CASE WHEN j.attempts >= j.max_attempts THEN clock.now END,
          lease_expires_at = NULL,
          last_error       = $4::text,
          errors           = ${appendError('$4::text')},
          updated_at       = clock.now
        FROM clock
        WHERE j.id = ANY(ARRAY(SELECT id FROM expired)) -- locked above: no other guard needed
        RETURNING j.id, j.queue, j.status, j.partition_key, j.slot, j.waited,
          j.available_at <= clock.now AS ready, ${flowReturning('j')}
      ),
      ${notified('$6', 'rescued', READY_OR_PARTITION_FREED)},
      ${finishedNotified('$6', 'rescued', "status = 'dead'")},
      ${flowSettled(s, 'rescued', DEAD_OUTCOME)}
      SELECT count(*) FILTER (WHERE r.status = 'pending')::integer AS rescued,
             count(*) FILTER (WHERE r.status = 'dead')::integer AS dead_lettered
      FROM rescued r, notified, finished_notified, flow_settled`,

    // $1 older than ms, $2 limit, $3 now. A child whose parent still waits is kept: the
    // parent reads its result when it runs (decision 0255).
    JobPrune: `${CLOCK('$3')},
      doomed AS (
        SELECT j.id FROM ${s}.jobs j
        WHERE j.status IN ${FINAL} AND j.finished_at < (SELECT now FROM clock) - $1::float8 ${MS}
          AND (j.parent_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM ${s}.jobs p WHERE p.id = j.parent_id AND p.status = 'waiting'))
        ORDER BY j.finished_at, j.id
        LIMIT $2
        FOR UPDATE OF j SKIP LOCKED
      ),
      gone AS (
        DELETE FROM ${s}.jobs j WHERE j.id = ANY(ARRAY(SELECT id FROM doomed)) -- locked above
        RETURNING 1
      )
      SELECT count(*)::integer AS pruned FROM gone`,
  };
}
