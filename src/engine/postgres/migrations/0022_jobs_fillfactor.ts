import type { Migration } from './migration.js';

/**
 * Half of each new page of `jobs` is left free (decision 0272), so that the claim's new row
 * version, and a kept job's completion, usually land on the page of the version they replace.
 * On a full page PostgreSQL moves the version to another page, and logs a row lock on the old
 * one first and the whole new tuple; on the same page it logs only the bytes that changed.
 * Measured on the sustained load (pg_walinspect): 915 → 825 WAL bytes a job deleting finished
 * jobs, 1,319 → 1,104 keeping them, and the kept table no larger (space freed by pruning is
 * reused in place). Takes a SHARE UPDATE EXCLUSIVE lock only (reads and writes go on), and
 * applies to pages written from now on; existing pages keep their contents until rewritten.
 */
export const jobsFillfactor: Migration = {
  version: 22,
  name: 'jobs_fillfactor',
  up: (s) => `ALTER TABLE ${s}.jobs SET (fillfactor = 50);`,
};
