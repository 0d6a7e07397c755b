import type { Migration } from './migration.js';

/**
 * How often the latest claim of a job was renewed, and when last (issue 30's job timeline,
 * decision 0269): the claim sets `renewals` to 0 and `renewed_at` to NULL, each renewal adds one
 * and stamps the time, in the statements that write the row anyway; a failed attempt's entry in
 * `errors` keeps its claim's count. Columns with a constant default (or none) are added without
 * rewriting the table.
 */
export const jobRenewals: Migration = {
  version: 20,
  name: 'job_renewals',
  up: (s) => `
    ALTER TABLE ${s}.jobs
      ADD COLUMN renewals integer NOT NULL DEFAULT 0,
      ADD COLUMN renewed_at timestamptz;
  `,
};
