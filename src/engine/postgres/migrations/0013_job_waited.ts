import type { Migration } from './migration.js';

/**
 * Whether someone waits for the job's outcome (`waitFor`, GET /api/jobs/:id/wait; decision
 * 0249). Set by the waiter (JobWatch) while the job is live; the statements that finish a job
 * notify topic `job-finished` only for rows that have it, so a job nobody waits for costs its
 * finishing statement no NOTIFY (and no commit on the global notify lock). A NOT NULL column
 * with a constant default is added without rewriting the table (PostgreSQL 11 and later).
 */
export const jobWaited: Migration = {
  version: 13,
  name: 'job_waited',
  up: (s) => `
    ALTER TABLE ${s}.jobs ADD COLUMN waited boolean NOT NULL DEFAULT false;
  `,
};
