import type { Migration } from './migration.js';

/**
 * A job's recorded steps (`ctx.step`, `ctx.sleep`; decision 0254): one row per (job, name),
 * written in the step's own transaction by an INSERT guarded by the job's ownership, so a step
 * is recorded once. The primary key is the once: a second record of a name conflicts. `seq`
 * keeps the recording order (steps recorded in one instant of a pinned clock stay in order).
 * Deleted with their job (ON DELETE CASCADE); a retried job keeps them.
 */
export const jobSteps: Migration = {
  version: 15,
  name: 'job_steps',
  up: (s) => `
    CREATE TABLE ${s}.job_steps (
      job_id      bigint      NOT NULL REFERENCES ${s}.jobs (id) ON DELETE CASCADE,
      name        text        NOT NULL,
      value       jsonb       NOT NULL,
      generation  bigint      NOT NULL,
      recorded_at timestamptz NOT NULL,
      seq         bigint      GENERATED ALWAYS AS IDENTITY,
      PRIMARY KEY (job_id, name)
    );
  `,
};
