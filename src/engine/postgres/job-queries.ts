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
import {
  CLOCK,
  READY_OR_PARTITION_FREED,
  SLOT_FREED,
  appendError,
  finishedNotified,
  notified,
} from './job-sql.js';

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
  };
}
