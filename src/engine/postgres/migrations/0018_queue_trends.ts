import type { Migration } from './migration.js';

/**
 * Per-minute figures per queue for the console's trends (issue 30, decision 0265), written by
 * the maintainer from the jobs themselves and pruned by it: at most one row per (minute, queue),
 * so with the default day of retention at most 1,440 rows per queue that had work or a backlog.
 *
 * Two partial indexes let the recording statement find every job that may hold an event of the
 * last minutes without reading the whole table (the finished ones come from `jobs_finished`,
 * the processing ones from `jobs_rescue`):
 * - `jobs_pending_again`: pending jobs that were claimed before (a failed attempt waiting for
 *   its retry, a rescued or handed-back job), by `updated_at`, which is at or after each of
 *   their events. A job on the happy path (enqueued, claimed, completed) never enters it.
 * - `jobs_waiting`: flow parents waiting for their children, by queue, for the depth.
 */
export const queueTrends: Migration = {
  version: 18,
  name: 'queue_trends',
  up: (s) => `
    CREATE TABLE ${s}.queue_trends (
      minute        timestamptz      NOT NULL CHECK (date_bin('1 minute', minute, '2000-01-01 00:00:00+00') = minute),
      queue         text             NOT NULL,
      completed     integer          NOT NULL DEFAULT 0 CHECK (completed >= 0),
      failed        integer          NOT NULL DEFAULT 0 CHECK (failed >= 0),
      dead          integer          NOT NULL DEFAULT 0 CHECK (dead >= 0),
      started       integer          NOT NULL DEFAULT 0 CHECK (started >= 0),
      pickup_p50_ms double precision,
      pickup_p99_ms double precision,
      waiting       integer,
      pending       integer,
      processing    integer,
      recorded_at   timestamptz      NOT NULL,
      PRIMARY KEY (minute, queue),
      CHECK ((waiting IS NULL) = (pending IS NULL) AND (pending IS NULL) = (processing IS NULL))
    );

    CREATE INDEX jobs_pending_again ON ${s}.jobs (updated_at)
      WHERE status = 'pending' AND claimed_at IS NOT NULL;
    CREATE INDEX jobs_waiting ON ${s}.jobs (queue) WHERE status = 'waiting';
  `,
};
