import type { Migration } from './migration.js';

/**
 * A job's progress (issue 27 part 4, decision 0251): what the handler of the latest attempt last
 * reported with `ctx.progress`, a number from 0 to 100 or a JSON object of at most 64 KiB
 * (checked above the engine, where the error can name the field). NULL until it reports; a claim
 * sets it back to NULL. A nullable column without a default is added without rewriting the
 * table, and being in no index it keeps a progress write a heap-only (HOT) update.
 */
export const jobProgress: Migration = {
  version: 12,
  name: 'job_progress',
  up: (s) => `
    ALTER TABLE ${s}.jobs ADD COLUMN progress jsonb;
  `,
};
