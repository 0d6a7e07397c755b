/**
 * The flow-control fragments of the claim statement (claim-queries.ts, JobClaimLimited;
 * decisions 0239 and 0253). A claim reads each of its queues' settings row (absent: the
 * defaults), works out how many jobs each queue may start now (`room`), and takes at most that.
 *
 * Exactness: claims of a limited queue are serialised. `settings` takes the queues' settings
 * rows FOR UPDATE (in name order, so claimers of overlapping lists cannot deadlock), and what
 * must be current is counted by VOLATILE functions (migration 14), which take their own snapshot
 * once the lock is granted: every earlier claim of those queues has committed by then, so what
 * they count processing is what is processing (completions only ever make the count smaller).
 * The locked row itself is read in its newest version. The statement's own, older snapshot only
 * proposes jobs: one another claim took meanwhile fails its row lock's re-check and is skipped.
 *
 * - paused: room 0. A claim that began before the pause committed may still start its jobs
 *   (the change is in force from the next claim cycle, as for every setting).
 * - concurrency N: room is N minus the queue's processing jobs that count against it (`slot`).
 * - perKeyConcurrency N: a keyed job may start when its key's older unfinished jobs and younger
 *   processing jobs number fewer than N (PARTITION_ROOM); the default of one per key is also
 *   held by the unique index `jobs_partition_processing` (key_slot 0).
 * - rate { limit, per }, a sliding window: a job may start at t only if fewer than `limit` jobs
 *   of the queue started in (t - per, t]. The claim appends its instants to `queues.starts`
 *   (which keeps two windows' worth) and its instant to `rate_claim_at`; the CHECK
 *   `queues_rate_exact` (migration 11) refuses (23514) a window of `per` holding the claim's
 *   instant with more than the limit, or an instant so much older than the newest start that
 *   starts it needed may have been pruned (claims with clocks out of order).
 *
 * Processing jobs whose lease expired still count until the rescuer hands them back: a limit
 * never counts fewer jobs than the valid holders, only, for a while, a few more.
 */
import { MS } from './sql-units.js';

/** CTEs `settings` and `limits` (queue, per_key, concurrency, room). Needs `clock`, $1, $3. */
export const CLAIM_LIMITS = (s: string): string => `settings AS (
        SELECT qs.name, qs.paused, qs.concurrency, qs.per_key_concurrency, qs.rate_limit,
               qs.rate_per_ms, qs.starts, qs.fairness
        FROM ${s}.queues qs WHERE qs.name IN (SELECT unnest((SELECT $1::text[])))
        ORDER BY qs.name
        FOR UPDATE OF qs
      ),
      limits AS (
        SELECT q.queue,
          CASE WHEN st.name IS NULL THEN 1 ELSE st.per_key_concurrency END AS per_key,
          coalesce(st.fairness, 'oldest') AS fairness,
          st.concurrency,
          CASE WHEN st.paused THEN 0 ELSE greatest(0, least(
            (SELECT $3::integer),
            CASE WHEN st.concurrency IS NOT NULL
              THEN st.concurrency - ${s}.queue_slots_taken(q.queue) END,
            CASE WHEN st.rate_limit IS NOT NULL THEN st.rate_limit - (
              SELECT count(*) FROM unnest(st.starts) AS t(at)
              WHERE t.at > clock.now - st.rate_per_ms ${MS}) END
          )) END::integer AS room
        FROM unnest((SELECT $1::text[])) AS q(queue)
        LEFT JOIN settings st ON st.name = q.queue
        CROSS JOIN clock
      )`;

/**
 * CTE `busy_keys` (queue, partition_key): the keys of the claim's queues that are full, with
 * as many jobs processing as their perKeyConcurrency allows (one for the default). No pending
 * job of such a key can start, so the scan skips it with one hashed lookup instead of the two
 * index probes of PARTITION_ROOM: a key with a deep backlog behind its running head(s) would
 * otherwise cost every claim of the queue a probe per job of that backlog (measured: 809 jobs
 * behind two busy keys, 21.6 ms a claim before, 2.0 ms after; 5,000 behind one, 77.6 and 4.5).
 * This one is the plain claim's, where every key takes one job at a time.
 */
export const BUSY_KEYS = (s: string): string => `busy_keys AS (
        SELECT u.queue, u.partition_key FROM ${s}.jobs u
        WHERE u.queue IN (SELECT unnest((SELECT $1::text[])))
          AND u.partition_key IS NOT NULL AND u.status = 'processing'
        GROUP BY u.queue, u.partition_key
      )`;

/** BUSY_KEYS for the limited claim: a key is full at its queue's perKeyConcurrency (`limits`). */
export const BUSY_KEYS_LIMITED = (s: string): string => `busy_keys AS (
        SELECT u.queue, u.partition_key FROM ${s}.jobs u
        JOIN limits w ON w.queue = u.queue AND w.per_key IS NOT NULL
        WHERE u.queue IN (SELECT unnest((SELECT $1::text[])))
          AND u.partition_key IS NOT NULL AND u.status = 'processing'
        GROUP BY u.queue, u.partition_key, w.per_key HAVING count(*) >= w.per_key
      )`;

/** Job `j` may belong to a key with room: a cheap test, before the exact one. Needs BUSY_KEYS. */
export const NOT_BUSY = `(j.partition_key IS NULL
              OR (j.queue, j.partition_key) NOT IN (SELECT b.queue, b.partition_key FROM busy_keys b))`;

/**
 * Job `j` (keyed) is the head of its partition: no older unfinished job of its (queue,
 * partition_key), and no younger one processing. Two index probes; the default rule of one job
 * in flight per key, in both claim statements.
 */
export const PARTITION_HEAD = (s: string): string => `NOT EXISTS (SELECT 1 FROM ${s}.jobs o
                WHERE o.queue = j.queue AND o.partition_key = j.partition_key
                  AND o.status IN ('pending', 'processing') AND o.id < j.id)
              AND NOT EXISTS (SELECT 1 FROM ${s}.jobs o
                WHERE o.queue = j.queue AND o.partition_key = j.partition_key
                  AND o.status = 'processing' AND o.id > j.id)`;

/**
 * Whether job `j` may start under its queue's perKeyConcurrency (`w.per_key`): unkeyed jobs
 * and keys without a cap always; under N (1 by default) when its key's older unfinished jobs and
 * younger processing jobs (counted fresh: key_processing_after) number fewer than N. For 1
 * that is PARTITION_HEAD, whose stale reads the unique index `jobs_partition_processing` backs.
 */
export const PARTITION_ROOM = (s: string): string => `(j.partition_key IS NULL OR w.per_key IS NULL
            OR (CASE WHEN w.per_key = 1 THEN ${PARTITION_HEAD(s)}
            ELSE
              (SELECT count(*) FROM (SELECT 1 FROM ${s}.jobs o
                WHERE o.queue = j.queue AND o.partition_key = j.partition_key
                  AND o.status IN ('pending', 'processing') AND o.id < j.id
                LIMIT w.per_key) older)
              + ${s}.key_processing_after(j.queue, j.partition_key, j.id, w.per_key)
              < w.per_key
            END))`;

/**
 * fairness 'key': the queue's claimable jobs ranked within their partition key (unkeyed jobs
 * are one group), so that a claim takes every key's first job before any key's second: one
 * key's backlog cannot starve another's. Known cost: it reads every pending, available job of
 * the queue on each claim (a window over them), where the oldest-first scan stops at its limit.
 */
export const FAIR_RANKS = (s: string): string => `SELECT f.id, row_number() OVER (
              PARTITION BY f.partition_key ORDER BY f.priority DESC, f.available_at, f.id) AS rank
            FROM ${s}.jobs f
            WHERE f.queue = w.queue AND f.status = 'pending'
              AND f.available_at <= (SELECT now FROM clock)`;

/**
 * CTE `assigned` (id, slot, key_slot): the jobs of `picked`, with what they write in the two
 * unique indexes over processing jobs. Claims of a limited queue run one at a time and count on
 * fresh snapshots (above), so the counts in `limits` and PARTITION_ROOM are exact without
 * numbered slots (decision 0253 replaced those of 0239):
 * - `slot` marks a job that counts against its queue's concurrency: -id (unique, so never a
 *   conflict in `jobs_queue_slot`) when the queue has a cap, NULL otherwise. The count in
 *   `limits` reads it through that index, and a finishing job that held one wakes its queue's
 *   workers (job-sql.ts, SLOT_FREED): room opened.
 * - `key_slot` is 0 where one job per key is the rule (the default, and perKeyConcurrency 1):
 *   `jobs_partition_processing` then refuses a second processing job of a key whatever path
 *   claimed it; -id otherwise.
 */
export const CLAIM_ASSIGNED = `assigned AS (
        SELECT p.id, CASE WHEN w.concurrency IS NOT NULL THEN -p.id END AS slot,
          CASE WHEN p.partition_key IS NULL OR w.per_key = 1 THEN 0 ELSE -p.id END AS key_slot
        FROM picked p
        JOIN limits w ON w.queue = p.queue
      )`;

/**
 * CTEs `rate_starts` (the UPDATE of each rate-limited queue's window) and `started` (one row,
 * for the final SELECT to join, so the claim's answer waits for it). Needs `claimed`.
 */
export const RATE_STARTS = (s: string): string => `rate_starts AS (
        UPDATE ${s}.queues qs SET
          starts = (SELECT coalesce(array_agg(t.at ORDER BY t.at), '{}')
                    FROM unnest(qs.starts) AS t(at)
                    WHERE t.at > greatest(clock.now, (SELECT max(m) FROM unnest(qs.starts) AS m))
                                 - 2 * qs.rate_per_ms ${MS})
                   || array_fill(clock.now, ARRAY[c.n]),
          rate_claim_at = clock.now
        FROM clock, (SELECT queue, count(*)::integer AS n FROM claimed GROUP BY queue) c
        WHERE qs.name = c.queue AND qs.rate_limit IS NOT NULL
        RETURNING 1
      ),
      started AS (SELECT count(*) AS n FROM rate_starts)`;
