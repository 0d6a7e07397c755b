import type { Migration } from './migration.js';

/**
 * Flow control per queue (issue 26, decision 0239).
 *
 * - `queues`: one row per queue that has been configured; a queue without a row has the
 *   defaults (running, no concurrency cap, one job in flight per partition key, no rate, oldest
 *   first). `per_key_concurrency` NULL means no cap per key; `starts` holds the claim instants
 *   of the rate's current window, newest last. The CHECK `queues_rate_exact` is the rate's
 *   guarantee: two claims that raced each computed their room on an old snapshot, but their
 *   updates of this row run one after the other on its newest version, and the second one's
 *   array would exceed the limit, so the database refuses it (23514) and the claim runs again.
 * - `jobs.slot`: which of the queue's `concurrency` slots a processing job holds (NULL when the
 *   queue had no cap at its claim). `jobs_queue_slot` makes a slot unique among processing jobs
 *   of a queue: racing claimers cannot both take slot k (23505, the claim runs again). Jobs that
 *   were already running when the cap was set are given slots below zero (-id) by `configure`,
 *   so they count without taking one of the cap's slots.
 * - `jobs.key_slot`: the same for partition keys, which replaces the old one-per-key index: 0
 *   for the default of one job in flight per key (so the old rule is the new index's special
 *   case), 0..N-1 under `perKeyConcurrency: N`, and -id (unique, so unlimited) without a cap.
 *   Both slot columns are bigint so that -id fits.
 */
export const queueSettings: Migration = {
  version: 8,
  name: 'queue settings',
  up: (s) => `
    CREATE TABLE ${s}.queues (
      name                text        PRIMARY KEY,
      paused              boolean     NOT NULL DEFAULT false,
      concurrency         integer     CHECK (concurrency BETWEEN 1 AND 10000),
      per_key_concurrency integer     DEFAULT 1 CHECK (per_key_concurrency BETWEEN 1 AND 1000),
      rate_limit          integer     CHECK (rate_limit BETWEEN 1 AND 10000),
      rate_per_ms         integer     CHECK (rate_per_ms BETWEEN 10 AND 86400000),
      fairness            text        NOT NULL DEFAULT 'oldest' CHECK (fairness IN ('oldest', 'key')),
      starts              timestamptz[] NOT NULL DEFAULT '{}',
      updated_at          timestamptz NOT NULL,
      CHECK ((rate_limit IS NULL) = (rate_per_ms IS NULL)),
      CONSTRAINT queues_rate_exact CHECK (cardinality(starts) <= coalesce(rate_limit, 0))
    );

    ALTER TABLE ${s}.jobs ADD COLUMN slot bigint, ADD COLUMN key_slot bigint NOT NULL DEFAULT 0;
    DROP INDEX ${s}.jobs_partition_processing;
    CREATE UNIQUE INDEX jobs_partition_processing ON ${s}.jobs (queue, partition_key, key_slot)
      WHERE partition_key IS NOT NULL AND status = 'processing';
    CREATE UNIQUE INDEX jobs_queue_slot ON ${s}.jobs (queue, slot)
      WHERE slot IS NOT NULL AND status = 'processing';
  `,
};
