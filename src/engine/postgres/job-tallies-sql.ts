/**
 * SQL of the job tallies (migration 0021, decision 0270): what a statement deleting completed
 * jobs counts for the trends, and the minute and bucket expressions the trends share with it.
 */

/** The whole UTC minute holding `at`, whatever the session's time zone. */
export const MINUTE = (at: string): string =>
  `date_bin('1 minute', ${at}, timestamptz '2000-01-01 00:00:00+00')`;

/**
 * The pickup latency bucket of core/pickup-buckets.ts, floor(4 · ln(1 + ms) / ln 2) capped at
 * 127, in float8 as the memory engine computes it: numeric's log cost a third of the fastest
 * deleting burn-down (measured, decision 0270); float8 costs nothing measurable.
 */
const PICKUP_BUCKET = (claimedAt: string, availableAt: string): string =>
  `least(127, floor(4 * ln(1 + greatest(0,
     date_part('epoch', ${claimedAt} - ${availableAt}) * 1000)) / ln(2::float8)))::smallint`;

/**
 * A CTE adding the events of the jobs a DELETE returned as `deleted` (with queue, claimed_at,
 * available_at and errors) to `job_tallies`, under this backend's pid: the completion at
 * `clock.now`, the latest claim's start by pickup bucket, and each kept failed attempt (the
 * errors of a job that never failed are not even opened).
 * Sorted before the upsert, so two statements of one backend take the row locks in one order.
 */
export const tallyRemoved = (s: string, deleted: string): string => `
  tallied AS (
    INSERT INTO ${s}.job_tallies AS t (minute, queue, backend, event, bucket, jobs)
    SELECT e.minute, e.queue, pg_backend_pid(), e.event, e.bucket, count(*)::integer
    FROM (
      SELECT ${MINUTE('clock.now')} AS minute, d.queue, 'completed' AS event, 0::smallint AS bucket
        FROM ${deleted} d, clock
      UNION ALL
      SELECT ${MINUTE('d.claimed_at')}, d.queue, 'started', ${PICKUP_BUCKET('d.claimed_at', 'd.available_at')}
        FROM ${deleted} d WHERE d.claimed_at IS NOT NULL
      UNION ALL
      SELECT ${MINUTE("(e.value->>'at')::timestamptz")}, d.queue, 'failed', 0::smallint
        FROM ${deleted} d, jsonb_array_elements(d.errors) AS e(value)
        WHERE d.errors <> '[]'::jsonb
    ) e
    GROUP BY e.minute, e.queue, e.event, e.bucket
    ORDER BY e.minute, e.queue, e.event, e.bucket
    ON CONFLICT (minute, queue, backend, event, bucket) DO UPDATE SET jobs = t.jobs + excluded.jobs
  )`;
