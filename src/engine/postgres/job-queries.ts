/**
 * The statements of a job's lifecycle on a worker, past its claim (claim-queries.ts) and its
 * enqueue (enqueue-queries.ts): renew, report progress, complete, fail, hand back. Each is
 * fenced by the claim's generation (OWNED), named EntityVerb, and batched: one statement for any
 * number of jobs. The conventions and fragments they share with every job statement are in
 * job-sql.ts; the administration's statements (cancel, retry, delete, reads, the operations over
 * many jobs, rescue, prune) in job-admin-queries.ts.
 */
import { MS } from './sql-units.js';
import { DEAD_OUTCOME, flowReturning, flowSettled } from './flow-settle-sql.js';
import { tallyRemoved } from './job-tallies-sql.js';
import { HEAP_BYTES } from './jobs-size-class.js';
import {
  CLOCK,
  READY_OR_PARTITION_FREED,
  SLOT_FREED,
  appendError,
  finishedNotified,
  notified,
} from './job-sql.js';

/**
 * The leases a batch names, and the job is owned by the caller: right worker, right term, still
 * processing. `$2` is the batch's ids (bigint[]), `$3` a jsonb object keyed `"<id>.<generation>"`
 * whose value is `[ordinal, …the job's own values]` (refs-sql in postgres-jobs.ts builds both).
 *
 * One table, no join (decision 0281): the ids are an index condition, so whatever plan the
 * planner picks reads only the batch's rows; the generation is looked up in the object (a binary
 * search on its keys) instead of joined from an unnest. The join it replaces let the planner put
 * `jobs` on the outside of a nested loop whenever it believed the table tiny (a generic plan made
 * in a fresh table's first seconds, or statistics taken while few jobs were processing), and
 * rescan the unnest for every row of a full scan of `jobs`: 7.6 s to complete 1,000 jobs in a
 * sustained run, each flush slower than the last as completions piled up.
 *
 * Each answers the jobs heap's size as well (HEAP_BYTES): the statements are named after its
 * size class, so that PostgreSQL plans them anew as the table grows (decision 0282).
 *
 * "Processing" is written `lease_expires_at IS NOT NULL` (the same thing, by a CHECK of the
 * table) on purpose: `status = 'processing'` would let the planner scan the whole `jobs_rescue`
 * index instead of looking the ids up (measured: 10 ms with 10k jobs in flight, against 0.1 ms).
 */
const REF_KEY = `(j.id::text || '.' || j.generation::text)`;
const OWNED = `j.id = ANY($2::bigint[]) AND $3::jsonb ? ${REF_KEY}
  AND j.claimed_by = $1 AND j.lease_expires_at IS NOT NULL`;
/** The `i`th value of the job's entry in `$3` (0: its ordinal), as text. */
const refText = (i: number): string => `($3::jsonb -> ${REF_KEY} ->> ${i})`;
/** The `i`th value of the job's entry in `$3`, as jsonb. */
const refJson = (i: number): string => `($3::jsonb -> ${REF_KEY} -> ${i})`;
const ORDINAL = `${refText(0)}::integer AS o`;
/** JobFail's `final` flag of the job. */
const FINAL = `${refText(3)}::boolean`;

export interface JobQueries {
  JobRenewLeases: string;
  JobProgress: string;
  JobComplete: string;
  JobCompleteRemove: string;
  JobFail: string;
  JobHandBack: string;
}

export function jobQueries(s: string): JobQueries {
  return {
    // $1 worker id, $2 ids bigint[], $3 refs jsonb ({"id.generation": [ordinal]}), $4 ttl ms, $5 now
    JobRenewLeases: `${CLOCK('$5')},
      renewed AS (
        UPDATE ${s}.jobs j SET lease_expires_at = clock.now + $4::float8 ${MS}, updated_at = clock.now,
          renewals = j.renewals + 1, renewed_at = clock.now
        FROM clock
        WHERE ${OWNED} AND j.lease_expires_at > clock.now
        RETURNING j.id, j.lease_expires_at, ${ORDINAL}
      )
      SELECT id, lease_expires_at, ${HEAP_BYTES(s)} FROM renewed ORDER BY o`,

    // $1 worker id, $2 ids, $3 refs ({"id.generation": [ordinal, progress]}), $4 now.
    // Fenced like a renewal: a lease that has run out may be rescued any moment.
    JobProgress: `${CLOCK('$4')},
      reported AS (
        UPDATE ${s}.jobs j SET progress = ${refJson(1)}, updated_at = clock.now
        FROM clock
        WHERE ${OWNED} AND j.lease_expires_at > clock.now
        RETURNING j.id, ${ORDINAL}
      )
      SELECT id, ${HEAP_BYTES(s)} FROM reported ORDER BY o`,

    // $1 worker id, $2 ids, $3 refs ({"id.generation": [ordinal, result]}), $4 now, $5 channel.
    // No expiry test: while the generation is unchanged nobody else has claimed the job.
    JobComplete: `${CLOCK('$4')},
      done AS (
        UPDATE ${s}.jobs j SET
          status = 'completed', result = ${refJson(1)}, finished_at = clock.now,
          lease_expires_at = NULL, updated_at = clock.now
        FROM clock
        WHERE ${OWNED}
        RETURNING j.id, j.queue, j.partition_key, j.slot, j.waited, ${ORDINAL}, ${flowReturning('j')}
      ),
      ${notified('$5', 'done', SLOT_FREED)},
      ${finishedNotified('$5', 'done')},
      ${flowSettled(s, 'done', "'completed'")}
      SELECT d.id, ${HEAP_BYTES(s)} FROM done d, notified, finished_notified, flow_settled ORDER BY d.o`,

    // JobComplete for a worker with `removeOnComplete`: the same guard, the row deleted. $1 worker
    // id, $2 ids, $3 refs ({"id.generation": [ordinal]}), $4 now, $5 channel. A DELETE writes no
    // new row version and no index entries: about half the WAL of an UPDATE to completed. What
    // the trends would have read from the row is tallied instead (decision 0270).
    JobCompleteRemove: `${CLOCK('$4')},
      done AS (
        DELETE FROM ${s}.jobs j
        WHERE ${OWNED}
        RETURNING j.id, j.queue, j.partition_key, j.slot, j.waited, ${ORDINAL}, ${flowReturning('j')},
          j.claimed_at, j.available_at, j.errors
      ),
      ${tallyRemoved(s, 'done')},
      ${notified('$5', 'done', SLOT_FREED)},
      ${finishedNotified('$5', 'done')},
      ${flowSettled(s, 'done', "'completed'")}
      SELECT d.id, ${HEAP_BYTES(s)} FROM done d, notified, finished_notified, flow_settled ORDER BY d.o`,

    // $1 worker id, $2 ids, $3 refs ({"id.generation": [ordinal, error, retry delay ms, final]}),
    // $4 now, $5 channel
    JobFail: `${CLOCK('$4')},
      failed AS (
        UPDATE ${s}.jobs j SET
          status           = CASE WHEN ${FINAL} OR j.attempts >= j.max_attempts THEN 'dead' ELSE 'pending' END,
          available_at     = CASE WHEN ${FINAL} OR j.attempts >= j.max_attempts THEN j.available_at
                                  ELSE clock.now + greatest(${refText(2)}::float8, 0) ${MS} END,
          finished_at      = CASE WHEN ${FINAL} OR j.attempts >= j.max_attempts THEN clock.now END,
          lease_expires_at = NULL,
          last_error       = ${refText(1)},
          errors           = ${appendError(refText(1))},
          updated_at       = clock.now
        FROM clock
        WHERE ${OWNED}
        RETURNING j.id, j.queue, j.status, j.partition_key, j.slot, j.waited,
          j.available_at <= clock.now AS ready, ${ORDINAL}, ${flowReturning('j')}
      ),
      ${notified('$5', 'failed', READY_OR_PARTITION_FREED)},
      ${finishedNotified('$5', 'failed', "status = 'dead'")},
      ${flowSettled(s, 'failed', DEAD_OUTCOME)}
      SELECT f.id, f.status, ${HEAP_BYTES(s)} FROM failed f, notified, finished_notified, flow_settled ORDER BY f.o`,

    // $1 worker id, $2 ids, $3 refs ({"id.generation": [ordinal]}), $4 now, $5 channel.
    // The attempt is given back: a drain is not the job's fault.
    JobHandBack: `${CLOCK('$4')},
      handed AS (
        UPDATE ${s}.jobs j SET
          status = 'pending', available_at = clock.now, attempts = greatest(j.attempts - 1, 0),
          lease_expires_at = NULL, updated_at = clock.now
        FROM clock
        WHERE ${OWNED}
        RETURNING j.id, j.queue, ${ORDINAL}
      ),
      ${notified('$5', 'handed')}
      SELECT h.id, ${HEAP_BYTES(s)} FROM handed h, notified ORDER BY h.o`,
  };
}
