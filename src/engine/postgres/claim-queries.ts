/**
 * The two claim statements of the job family (decision 0239): JobClaimBatch for queues without
 * settings, JobClaimLimited for queues with flow control (its fragments in claim-limits-sql.ts).
 * PostgresJobs chooses between them; both take the same parameters and answer the claimed jobs
 * followed by two columns: whether any of the claim's queues has settings, and the size of the
 * jobs heap in bytes (jobs-size-class.ts HEAP_BYTES, decision 0282).
 */
import { DURABLE_CLOCK } from './durable-commit.js';
import {
  BUSY_KEYS,
  BUSY_KEYS_LIMITED,
  CLAIM_LIMITS,
  NOT_BUSY,
  CLAIM_ASSIGNED,
  FAIR_RANKS,
  PARTITION_HEAD,
  PARTITION_ROOM,
  RATE_STARTS,
} from './claim-limits-sql.js';
import { EPOCH_CTE, NEXT_TERM, QUARANTINE_GATE } from './epoch-sql.js';
import { HEAP_BYTES } from './jobs-size-class.js';
import { JOB_COLUMNS, type JobColumn } from './job-sql.js';
import { MS } from './sql-units.js';

export interface ClaimQueries {
  JobClaimBatch: string;
  JobClaimLimited: string;
}

/**
 * What the claim's answer leaves out, because the claimer knows it: status (processing),
 * claimed_by (itself), updated_at (the claim's now, which claimed_at carries), two columns
 * no claimable job has set: result and finished_at (a retry clears both; failure, hand-back and
 * rescue never set them), and progress, renewals and renewed_at, which the claim itself
 * clears. Sent as NULLs so each row keeps JOB_COLUMNS' positions; job-rows.ts
 * mapClaimedValues fills them in. Dropping them measured 7% more burn-down
 * throughput (decision 0210): PostgreSQL formats, and node reads, less per claimed job.
 */
const KNOWN_TO_CLAIMER: ReadonlySet<JobColumn> = new Set([
  'status',
  'claimed_by',
  'updated_at',
  'result',
  'finished_at',
  'progress',
  'renewals',
  'renewed_at',
] as const);
/**
 * What every claim writes on a job it takes ($2 worker id, $4 lease ttl ms), besides its slots.
 * `progress = NULL`: progress is the attempt's (decision 0251); the claim writes a new row
 * version anyway, so clearing a column costs nothing measurable (bench in the decision).
 */
const CLAIM_SET = `status = 'processing', claimed_by = $2, claimed_at = clock.now,
          lease_expires_at = clock.now + $4::float8 ${MS},
          generation = ${NEXT_TERM('j.generation')}, attempts = j.attempts + 1,
          updated_at = clock.now, progress = NULL, renewals = 0, renewed_at = NULL`;

const CLAIM_RETURNING = JOB_COLUMNS.map((c) =>
  KNOWN_TO_CLAIMER.has(c) ? `NULL AS ${c}` : `j.${c}`,
).join(', ');

/**
 * The claim's lower bound on `available_at` ($7, JobClaimParams.availableWithinMs; NULL: none).
 * As an index condition it lets PostgreSQL 18's skip scan start each priority's part of
 * `jobs_claim` at the bound, past the entries of jobs claimed or deleted since the last vacuum
 * (decision 0274); older servers read it as a filter on the same scan.
 */
const AVAILABLE_FROM = `(SELECT CASE WHEN $7::float8 IS NULL THEN '-infinity'::timestamptz
            ELSE now - $7::float8 ${MS} END FROM clock)`;

export function claimQueries(s: string): ClaimQueries {
  return {
    // The plain claim, for queues without settings (JobClaimLimited below serialises the claims
    // of a limited queue on its settings row, decision 0253).
    // $1 queues text[] (distinct), $2 worker id, $3 limit, $4 lease ttl ms, $5 now, $6 the
    // types to claim (text[], NULL: any; JobClaimParams.types), $7 available within ms (NULL:
    // any; AVAILABLE_FROM).
    //
    // Claimable: pending, available, and either unpartitioned or the head of its partition: no
    // older unfinished job in its (queue, partition_key), and no younger one processing (which
    // happens only when an older job turned live late, see below). Each queue is read in
    // `jobs_claim` order and stops at the limit; the partition tests are one probe each of
    // `jobs_partition_unfinished` and `jobs_partition_processing` (the inequalities on id keep
    // the planner from hashing every processing job instead). Locked rows are skipped; a row
    // changed since the snapshot is re-checked on its newest version; the UPDATE below needs
    // no guard of its own because it only touches rows this statement has locked.
    //
    // Why the unique index `jobs_partition_processing` as well: under READ COMMITTED the head
    // test reads the statement's snapshot, and row locks only cover the row being claimed. A job
    // of the partition that turns live behind our back (an enqueue committed late with a lower
    // id, an operator retry) can be claimed by another claimer between our snapshot and our
    // lock, and no query alone can see it. The index makes the database refuse the second
    // processing row (23505); the caller then runs the claim again on a fresh snapshot. An
    // advisory xact lock would not help (our snapshot predates it), and a `partitions` lock
    // row would cost a second row write on every claim and finish of a partitioned job.
    //
    // The queue list and the limit are read through `(SELECT $n)`, which hides their values
    // from the planner. Otherwise a custom plan sees a one-element array and LIMIT 1, always
    // costs less than the generic plan (ten queues, a tenth of the table), and PostgreSQL
    // plans every claim anew: 0.45 ms, four times the claim's own execution, on the path of
    // every idle worker's pickup. Hidden, both cost the same and the generic plan is kept; its
    // shape is the one above (jobs_claim in order, stopped at the limit).
    //
    // Known cost: the scan walks past pending jobs queued behind a busy partition's head, so a
    // partition with a deep backlog slows every claim of its queue by one index probe per job
    // it passes; many partitions with a few jobs each cost nothing extra.
    //
    // With several queues each queue's scan may lock up to `limit` rows; the extra ones are
    // unlocked at the statement's commit, microseconds later.
    JobClaimBatch: `${DURABLE_CLOCK('$5')}, ${EPOCH_CTE(s)},
      gate AS (SELECT ${QUARANTINE_GATE(s, 'true')} AS open, EXISTS (
          SELECT 1 FROM ${s}.queues qs WHERE qs.name IN (SELECT unnest((SELECT $1::text[])))
        ) AS configured, ${HEAP_BYTES(s)} FROM clock, epoch),
      ${BUSY_KEYS(s)},
      picked AS (
        SELECT c.id FROM unnest((SELECT $1::text[])) AS q(queue)
        CROSS JOIN LATERAL (
          SELECT j.id, j.priority, j.available_at FROM ${s}.jobs j
          WHERE (SELECT open AND NOT configured FROM gate) AND j.queue = q.queue
            AND j.status = 'pending' AND j.available_at <= (SELECT now FROM clock)
            AND j.available_at >= ${AVAILABLE_FROM}
            AND ((SELECT $6::text[]) IS NULL OR j.type = ANY((SELECT $6::text[])::text[]))
            AND ${NOT_BUSY} AND (j.partition_key IS NULL OR (
${PARTITION_HEAD(s)}))
          ORDER BY j.priority DESC, j.available_at, j.id
          LIMIT (SELECT $3::integer)
          FOR UPDATE OF j SKIP LOCKED
        ) c
        ORDER BY c.priority DESC, c.available_at, c.id
        LIMIT (SELECT $3::integer)
      ),
      claimed AS (
        UPDATE ${s}.jobs j SET
          ${CLAIM_SET},
          slot             = NULL,
          key_slot         = 0
        FROM clock
        -- By id: planned on a small table this is a sequential scan, which is why the
        -- statement is named after the heap's size class (decision 0282).
        WHERE j.id = ANY(ARRAY(SELECT id FROM picked))
        RETURNING ${CLAIM_RETURNING}
      )
      SELECT c.*, g.configured, g.heap_bytes FROM gate g LEFT JOIN claimed c ON true
      ORDER BY c.priority DESC, c.available_at, c.id`,

    // The same claim for queues with settings (claim-limits-sql.ts, decision 0239): their
    // limits, and the slots that make them exact. Kept apart because its extra steps cost a
    // default claim half again its time (measured: 0.25 to 0.41 ms of execution, twice the
    // round trip with its larger plan's start-up), for queues that have no limits at all.
    JobClaimLimited: `${DURABLE_CLOCK('$5')}, ${EPOCH_CTE(s)},
      ${CLAIM_LIMITS(s)},
      ${BUSY_KEYS_LIMITED(s)},
      gate AS (SELECT ${QUARANTINE_GATE(s, 'true')} AS open,
        EXISTS (SELECT 1 FROM settings) AS configured, ${HEAP_BYTES(s)} FROM clock, epoch),
      picked AS (
        SELECT c.id, c.queue, c.partition_key, c.priority, c.available_at
        FROM limits w
        CROSS JOIN LATERAL (
          SELECT j.id, j.queue, j.partition_key, j.priority, j.available_at FROM ${s}.jobs j
          WHERE w.fairness = 'oldest' AND (SELECT open FROM gate) AND j.queue = w.queue
            AND j.status = 'pending' AND j.available_at <= (SELECT now FROM clock)
            AND j.available_at >= ${AVAILABLE_FROM}
            AND ((SELECT $6::text[]) IS NULL OR j.type = ANY((SELECT $6::text[])::text[]))
            AND ${NOT_BUSY} AND ${PARTITION_ROOM(s)}
          ORDER BY j.priority DESC, j.available_at, j.id
          LIMIT w.room
          FOR UPDATE OF j SKIP LOCKED
        ) c
        UNION ALL
        SELECT c.id, c.queue, c.partition_key, c.priority, c.available_at
        FROM limits w
        CROSS JOIN LATERAL (
          SELECT j.id, j.queue, j.partition_key, j.priority, j.available_at
          FROM (${FAIR_RANKS(s)}) r
          JOIN ${s}.jobs j ON j.id = r.id
          WHERE w.fairness = 'key' AND (SELECT open FROM gate) AND j.status = 'pending'
            AND j.available_at >= ${AVAILABLE_FROM}
            AND ((SELECT $6::text[]) IS NULL OR j.type = ANY((SELECT $6::text[])::text[]))
            AND ${NOT_BUSY} AND ${PARTITION_ROOM(s)}
          ORDER BY r.rank, j.priority DESC, j.available_at, j.id
          LIMIT w.room
          FOR UPDATE OF j SKIP LOCKED
        ) c
        ORDER BY priority DESC, available_at, id
        LIMIT (SELECT $3::integer)
      ),
      ${CLAIM_ASSIGNED},
      claimed AS (
        UPDATE ${s}.jobs j SET
          ${CLAIM_SET},
          slot             = a.slot,
          key_slot         = a.key_slot
        -- Arrays, not a join with \`assigned\`: a join let the planner hash the whole jobs
        -- table (a sequential scan per claim); an unnest is looked up id by id.
        FROM clock, unnest(ARRAY(SELECT id FROM assigned ORDER BY id),
                           ARRAY(SELECT slot FROM assigned ORDER BY id),
                           ARRAY(SELECT key_slot FROM assigned ORDER BY id)) AS a(id, slot, key_slot)
        WHERE j.id = a.id
        RETURNING ${CLAIM_RETURNING}
      ),
      ${RATE_STARTS(s)}
      SELECT c.*, g.configured, g.heap_bytes FROM gate g CROSS JOIN started LEFT JOIN claimed c ON true
      ORDER BY c.priority DESC, c.available_at, c.id`,
  };
}
