import type { Migration } from './migration.js';

/**
 * A job's recorded steps (`ctx.step`, `ctx.sleep`; decision 0254): one row per (job, name),
 * written in the step's own transaction by an INSERT guarded by the job's ownership, so a step
 * is recorded once. The primary key is the once: a second record of a name conflicts. `seq`
 * keeps the recording order (steps recorded in one instant of a pinned clock stay in order).
 *
 * Steps go with their job, by a statement-level trigger rather than a foreign key: ON DELETE
 * CASCADE runs one lookup per deleted job through its own trigger call, which made the
 * completion that deletes (`removeOnComplete`, JobCompleteRemove) about 1.7 times slower in a
 * measurement of 20k jobs in batches of 500; the trigger deletes a whole statement's steps in
 * one probe of the primary key per job, within the measurement's noise. Every way a job is
 * deleted (completion, delete, prune, by hand) passes through it. A retried job keeps its steps.
 */
export const jobSteps: Migration = {
  version: 15,
  name: 'job_steps',
  up: (s) => `
    CREATE TABLE ${s}.job_steps (
      job_id      bigint      NOT NULL,
      name        text        NOT NULL,
      value       jsonb       NOT NULL,
      generation  bigint      NOT NULL,
      recorded_at timestamptz NOT NULL,
      seq         bigint      GENERATED ALWAYS AS IDENTITY,
      PRIMARY KEY (job_id, name)
    );

    CREATE FUNCTION ${s}.job_steps_gone() RETURNS trigger
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      -- = ANY(ARRAY(...)): index probes by job id, whatever the (unknown) size of the
      -- transition table; a join was planned as a scan of every step.
      DELETE FROM ${s}.job_steps st WHERE st.job_id = ANY(ARRAY(SELECT id FROM gone));
      RETURN NULL;
    END
    $fn$;

    CREATE TRIGGER jobs_steps_gone AFTER DELETE ON ${s}.jobs
      REFERENCING OLD TABLE AS gone
      FOR EACH STATEMENT EXECUTE FUNCTION ${s}.job_steps_gone();
  `,
};
