import type { Migration } from './migration.js';

/**
 * Counts a limited claim reads on a snapshot of their own (decision 0253). The claim statement
 * locks its queues' settings rows first; a VOLATILE function takes a new snapshot for each of
 * its queries, so these counts, made once the lock is granted, see every earlier claim of the
 * queue committed, though the claim statement's own snapshot predates its wait for the lock.
 * PL/pgSQL, so the planner never inlines them into the statement's snapshot.
 *
 * - `queue_slots_taken(queue)`: the queue's processing jobs that count against its cap.
 * - `key_processing_after(queue, key, id, lim)`: processing jobs of the key younger than `id`,
 *   counted up to `lim` (perKeyConcurrency above one).
 */
export const claimCounts: Migration = {
  version: 14,
  name: 'claim_counts',
  up: (s) => `
    CREATE FUNCTION ${s}.queue_slots_taken(q text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      RETURN (SELECT count(*) FROM ${s}.jobs u
              WHERE u.queue = q AND u.slot IS NOT NULL AND u.status = 'processing');
    END
    $fn$;

    CREATE FUNCTION ${s}.key_processing_after(q text, k text, after_id bigint, lim integer)
    RETURNS bigint LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      RETURN (SELECT count(*) FROM (SELECT 1 FROM ${s}.jobs o
              WHERE o.queue = q AND o.partition_key = k AND o.status = 'processing'
                AND o.id > after_id LIMIT lim) younger);
    END
    $fn$;
  `,
};
