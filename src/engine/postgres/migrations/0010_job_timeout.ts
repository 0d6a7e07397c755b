import type { Migration } from './migration.js';

/**
 * A job's own timeout (issue 26, decision 0241): how long one attempt may run before the worker
 * fails it and fires its signal. Stored on the job, so whichever worker claims it honours it;
 * NULL means the job has none and the claiming worker's default applies. Milliseconds in an
 * integer: the enqueue options cap it at 7 days, far below 2^31 ms. A nullable column without
 * a default is added without rewriting the table.
 *
 * Version 10: 8 and 9 are taken by work on the same issue.
 */
export const jobTimeout: Migration = {
  version: 10,
  name: 'job_timeout',
  up: (s) => `
    ALTER TABLE ${s}.jobs ADD COLUMN timeout_ms integer CHECK (timeout_ms > 0);
  `,
};
