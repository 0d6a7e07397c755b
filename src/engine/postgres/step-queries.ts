/**
 * The SQL of the step family (postgres-steps.ts, decision 0254), named EntityVerb. The quoted
 * schema is the only spliced text; every time comparison reads `coalesce($now, now())`.
 */
import { CLOCK, MS, notified } from './job-sql.js';

/**
 * The job is the caller's: right worker, right term, processing, lease unexpired. By primary
 * key, so `status = 'processing'` costs nothing here (see OWNED in job-queries.ts for why the
 * batch statements avoid it).
 */
const HELD = (now: string): string => `j.id = $1::bigint AND j.generation = $2::bigint
    AND j.claimed_by = $3::text AND j.status = 'processing' AND j.lease_expires_at > ${now}`;

/** An instant as the ISO string a Date prints (UTC, milliseconds): a sleep's recorded value. */
const isoText = (instant: string): string =>
  `to_char(${instant} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

export interface StepQueries {
  JobSteps: string;
  JobStepRecord: string;
  JobSleep: string;
}

export function stepQueries(s: string): StepQueries {
  return {
    // $1 job id. Recording order.
    JobSteps: `SELECT name, value, generation, recorded_at FROM ${s}.job_steps
      WHERE job_id = $1::bigint ORDER BY seq`,

    // $1 job id, $2 generation, $3 worker id, $4 name, $5 value jsonb, $6 now. Runs inside the
    // step's transaction, after the step function's own statements. FOR SHARE holds the job
    // row until COMMIT: a rescue or claim (which lock it FOR UPDATE, SKIP LOCKED) passes it by,
    // and a cancel, failure or renewal waits; one that committed first is seen (READ COMMITTED
    // re-checks the guard on the newest row version) and the step records nothing. So the step
    // is linearised at its commit: the job was ours then. A name already recorded conflicts:
    // only a stale run can meet one (the owner loaded the records before it ran the step).
    JobStepRecord: `INSERT INTO ${s}.job_steps (job_id, name, value, generation, recorded_at)
      SELECT j.id, $4::text, $5::jsonb, j.generation, coalesce($6::timestamptz, now())
      FROM ${s}.jobs j
      WHERE ${HELD('coalesce($6::timestamptz, now())')}
      FOR SHARE OF j
      ON CONFLICT (job_id, name) DO NOTHING
      RETURNING recorded_at`,

    // $1 job id, $2 generation, $3 worker id, $4 name, $5 delay ms, $6 now, $7 channel. One
    // guarded statement: back to pending until the wake-up, the attempt given back (a sleep is
    // not a failure), the sleep recorded. Its instant is kept to the millisecond, so the
    // recorded value and available_at agree. A sleep already recorded (a job woken early) keeps
    // its instant. The queue is woken as by a hand-back: a capped queue's slot was freed.
    JobSleep: `${CLOCK('$6')},
      earlier AS (
        SELECT (st.value #>> '{}')::timestamptz AS until FROM ${s}.job_steps st
        WHERE st.job_id = $1::bigint AND st.name = $4::text
      ),
      target AS (
        SELECT coalesce((SELECT until FROM earlier),
          date_trunc('milliseconds', clock.now + greatest($5::float8, 0) ${MS})) AS until
        FROM clock
      ),
      slept AS (
        UPDATE ${s}.jobs j SET
          status = 'pending', available_at = target.until, attempts = greatest(j.attempts - 1, 0),
          lease_expires_at = NULL, updated_at = clock.now
        FROM clock, target
        WHERE ${HELD('clock.now')}
        RETURNING j.id, j.queue, j.generation, j.available_at
      ),
      recorded AS (
        INSERT INTO ${s}.job_steps (job_id, name, value, generation, recorded_at)
        SELECT sl.id, $4::text, to_jsonb(${isoText('sl.available_at')}), sl.generation, clock.now
        FROM slept sl, clock
        WHERE NOT EXISTS (SELECT 1 FROM earlier)
      ),
      ${notified('$7', 'slept')}
      SELECT sl.available_at FROM slept sl, notified`,
  };
}
