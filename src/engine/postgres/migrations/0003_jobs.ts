import type { Migration } from './migration.js';

/**
 * Jobs and workers.
 *
 * - `jobs`: one row per job, kept after it finishes until pruned. `generation` is the job's
 *   fencing token, bumped by every claim; `errors` holds the newest 20 failed attempts as
 *   `{attempt, at, error}`. The id comes from `jobs_id_seq`, which enqueue draws from itself so
 *   that a batch's ids follow its input order (partition FIFO is id order).
 * - Claim path: `jobs_claim` serves "pending jobs of a queue by priority desc, available_at,
 *   id", the exact order of the claim scan, so a claim reads the index in order and stops at
 *   its limit. Rescue path: `jobs_rescue` holds only processing jobs, by lease expiry.
 * - Dedup: `jobs_live_key` makes (queue, key) unique among live (pending or processing) jobs;
 *   enqueue's `ON CONFLICT … DO NOTHING` infers it.
 * - Partitions: `jobs_partition_unfinished` answers "is there an older unfinished job in this
 *   partition?" with one index probe, and `jobs_partition_processing` is the guarantee itself:
 *   at most one processing job per (queue, partition_key), enforced by the database whatever
 *   the races between claimers (see claim-queries.ts, JobClaimBatch). It stands in for the
 *   `partitions` table of the design: no extra row to keep in step on every transition.
 * - Pruning: `jobs_finished` lets a bounded prune read the oldest finished jobs first.
 * - `workers`: one row per worker instance; `seq` keeps the order of first registration.
 */
export const jobs: Migration = {
  version: 3,
  name: 'jobs',
  up: (s) => `
    CREATE TABLE ${s}.jobs (
      id               bigint      GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME ${s}.jobs_id_seq) PRIMARY KEY,
      queue            text        NOT NULL,
      type             text,
      key              text,
      payload          jsonb,
      headers          jsonb       NOT NULL DEFAULT '{}'::jsonb,
      partition_key    text,
      priority         integer     NOT NULL DEFAULT 0,
      status           text        NOT NULL DEFAULT 'pending'
                       CHECK (status IN ('pending', 'processing', 'completed', 'dead', 'cancelled')),
      attempts         integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      max_attempts     integer     NOT NULL CHECK (max_attempts > 0),
      available_at     timestamptz NOT NULL,
      claimed_by       text,
      claimed_at       timestamptz,
      lease_expires_at timestamptz,
      generation       bigint      NOT NULL DEFAULT 0 CHECK (generation >= 0),
      result           jsonb,
      last_error       text,
      errors           jsonb       NOT NULL DEFAULT '[]'::jsonb,
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      finished_at      timestamptz,
      -- A job holds a lease exactly while it is processing (job-queries.ts relies on it).
      CHECK ((status = 'processing') = (lease_expires_at IS NOT NULL)),
      CHECK (status <> 'processing' OR claimed_by IS NOT NULL)
    );

    CREATE INDEX jobs_claim ON ${s}.jobs (queue, priority DESC, available_at, id)
      WHERE status = 'pending';
    CREATE INDEX jobs_rescue ON ${s}.jobs (lease_expires_at, id)
      WHERE status = 'processing';
    CREATE UNIQUE INDEX jobs_live_key ON ${s}.jobs (queue, key)
      WHERE key IS NOT NULL AND status IN ('pending', 'processing');
    CREATE INDEX jobs_partition_unfinished ON ${s}.jobs (queue, partition_key, id)
      WHERE partition_key IS NOT NULL AND status IN ('pending', 'processing');
    CREATE UNIQUE INDEX jobs_partition_processing ON ${s}.jobs (queue, partition_key)
      WHERE partition_key IS NOT NULL AND status = 'processing';
    CREATE INDEX jobs_finished ON ${s}.jobs (finished_at, id)
      WHERE status IN ('completed', 'dead', 'cancelled');

    CREATE TABLE ${s}.workers (
      id           text        PRIMARY KEY,
      seq          bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
      name         text        NOT NULL,
      host         text        NOT NULL,
      pid          integer     NOT NULL,
      queues       text[]      NOT NULL,
      concurrency  integer     NOT NULL,
      status       text        NOT NULL
                   CHECK (status IN ('alive', 'draining', 'dead', 'stopped')),
      started_at   timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      in_flight    integer     NOT NULL DEFAULT 0
    );
    -- The sweeper looks only at workers that still claim to be running.
    CREATE INDEX workers_live_last_seen ON ${s}.workers (last_seen_at)
      WHERE status IN ('alive', 'draining');
  `,
};
