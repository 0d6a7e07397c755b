/**
 * The statements of job administration (engine/job-admin.ts): cancel, retry and delete one job,
 * the same over many jobs in bounded batches (decision 0250), the reads (get, watch, list,
 * counts), and the maintenance a sweeper runs (rescue expired leases, prune finished jobs). Named
 * EntityVerb like every job statement; the conventions and fragments they share are in
 * job-sql.ts, the explorer's search in job-search-queries.ts.
 */
import { SCAN_FACTOR } from '../job-admin.js';
import { MS } from './sql-units.js';
import { DEAD_OUTCOME, flowReturning, flowSettled } from './flow-settle-sql.js';
import {
  CLOCK,
  FINAL,
  LIVE,
  READY_OR_PARTITION_FREED,
  SLOT_FREED,
  appendError,
  finishedNotified,
  jobColumns,
  notified,
} from './job-sql.js';

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

export interface JobAdminQueries {
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

export function jobAdminQueries(s: string): JobAdminQueries {
  const cols = jobColumns('j');
  return {
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
