import { JOBS_TOPIC, JOB_FINISHED_TOPIC } from '../../jobs.js';
import { notifyChannelOf, unquoteSchema } from '../notify-channel.js';
import type { Migration } from './migration.js';

/**
 * Flows of jobs (decision 0255): a parent runs once its children are done.
 *
 * - `parent_id`: the job whose child this one is (no foreign key: a key would add a lookup to
 *   every delete of a job, the removeOnComplete hot path, and a deleted parent simply leaves its
 *   finished children behind). `parent_policy`: what this child's failure does to its parent.
 *   `children_left`: on a parent only (NULL elsewhere), its children not yet done while it waits.
 * - Status `waiting`: a parent whose children are not all done. The claim reads pending jobs
 *   only, so it never sees one. A waiting root holds its key like a live job (`jobs_live_key`).
 * - Settlement (decision 0255): every statement that ends jobs (complete, complete-remove, fail,
 *   rescue, cancel, delete, and their bulk forms) calls `job_flow_ended` for its rows of a flow
 *   (flow-settle-sql.ts), after all its own rows are written, in its own transaction: a child's
 *   end and its parent's settlement commit together. Rows outside a flow (both columns NULL)
 *   are filtered out before any call. Not row triggers: a table with an AFTER ROW trigger makes
 *   every UPDATE and DELETE of a job fetch the old row version for it, whatever the WHEN clause,
 *   which measured 9% more time per completed job.
 * - `job_flow_settle`: the parent, locked, counts its child done (the last one makes it
 *   pending, announced on `jobs`), or dies by the child's policy, and then settles its own
 *   parent in turn. `job_flow_cancel_children(parent, at)`: its pending and waiting children
 *   cancelled, recursively. Running children finish.
 * - Notifications as the statements send them: `jobs|<queue>` when a parent becomes claimable
 *   or a partitioned pending job is cancelled, `job-finished|<id>` for waited-for jobs that end.
 *   Per row here (PostgreSQL sends identical ones once per transaction); flows are not the hot
 *   path.
 */
export const jobFlows: Migration = {
  version: 16,
  name: 'job_flows',
  up: (s) => {
    const channel = `'${notifyChannelOf(unquoteSchema(s))}'`;
    return `
    ALTER TABLE ${s}.jobs
      ADD COLUMN parent_id bigint,
      ADD COLUMN parent_policy text
        CHECK (parent_policy IN ('fail-parent', 'ignore', 'cancel-siblings')),
      ADD COLUMN children_left integer;
    ALTER TABLE ${s}.jobs DROP CONSTRAINT jobs_status_check;
    ALTER TABLE ${s}.jobs ADD CONSTRAINT jobs_status_check
      CHECK (status IN ('waiting', 'pending', 'processing', 'completed', 'dead', 'cancelled'));

    DROP INDEX ${s}.jobs_live_key;
    CREATE UNIQUE INDEX jobs_live_key ON ${s}.jobs (queue, key)
      WHERE key IS NOT NULL AND status IN ('pending', 'processing', 'waiting');
    CREATE INDEX jobs_children ON ${s}.jobs (parent_id, id) WHERE parent_id IS NOT NULL;


    CREATE FUNCTION ${s}.job_flow_cancel_children(parent bigint, stamp timestamptz)
    RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE
      c record;
    BEGIN
      FOR c IN
        UPDATE ${s}.jobs j SET
          status = 'cancelled', finished_at = stamp, lease_expires_at = NULL, updated_at = stamp
        WHERE j.parent_id = parent AND j.status IN ('pending', 'waiting')
        RETURNING j.id, j.queue, j.partition_key, j.waited, j.children_left
      LOOP
        IF c.partition_key IS NOT NULL THEN
          PERFORM pg_notify(${channel}, '${JOBS_TOPIC}|' || c.queue);
        END IF;
        IF c.waited THEN
          PERFORM pg_notify(${channel}, '${JOB_FINISHED_TOPIC}|' || c.id);
        END IF;
        IF c.children_left IS NOT NULL THEN
          PERFORM ${s}.job_flow_cancel_children(c.id, stamp);
        END IF;
      END LOOP;
    END
    $fn$;

    CREATE FUNCTION ${s}.job_flow_settle(
      child bigint, parent bigint, policy text, outcome text, error text, stamp timestamptz
    ) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE
      p record;
      reason text;
    BEGIN
      -- Locked: the children of one parent finishing at once settle it one after another.
      SELECT j.id, j.queue, j.status, j.children_left, j.available_at, j.waited, j.parent_id,
             j.parent_policy
      INTO p FROM ${s}.jobs j WHERE j.id = parent FOR UPDATE;
      -- Gone, or no longer waiting (dead, cancelled, retried): a late child changes nothing.
      IF NOT FOUND OR p.status <> 'waiting' THEN
        RETURN;
      END IF;
      IF outcome = 'completed' OR policy = 'ignore' THEN
        UPDATE ${s}.jobs SET
          children_left = children_left - 1,
          status = CASE WHEN children_left <= 1 THEN 'pending' ELSE 'waiting' END,
          updated_at = stamp
        WHERE id = parent;
        IF p.children_left <= 1 AND p.available_at <= stamp THEN
          PERFORM pg_notify(${channel}, '${JOBS_TOPIC}|' || p.queue);
        END IF;
        RETURN;
      END IF;
      reason := 'child #' || child || CASE outcome
        WHEN 'dead' THEN ' failed: ' || coalesce(error, 'no error recorded')
        WHEN 'cancelled' THEN ' was cancelled'
        ELSE ' was deleted before it completed' END;
      UPDATE ${s}.jobs j SET
        status = 'dead', children_left = j.children_left - 1, finished_at = stamp,
        updated_at = stamp, last_error = reason,
        errors = (
          SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]'::jsonb)
          FROM jsonb_array_elements(j.errors || jsonb_build_array(jsonb_build_object(
                 'attempt', j.attempts,
                 'at', to_char(stamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 'error', reason))) WITH ORDINALITY AS e(value, n)
          WHERE e.n > jsonb_array_length(j.errors) + 1 - 20)
      WHERE j.id = parent;
      IF p.waited THEN
        PERFORM pg_notify(${channel}, '${JOB_FINISHED_TOPIC}|' || parent);
      END IF;
      IF policy = 'cancel-siblings' THEN
        PERFORM ${s}.job_flow_cancel_children(parent, stamp);
      END IF;
      -- The parent is a child too: its own policy applies to its parent.
      IF p.parent_id IS NOT NULL THEN
        PERFORM ${s}.job_flow_settle(parent, p.parent_id, p.parent_policy, 'dead', reason, stamp);
      END IF;
    END
    $fn$;

    -- What a job of a flow ending means, called by each statement that ends jobs for its rows
    -- of a flow (flow-settle-sql.ts): 'completed' and 'dead' settle its parent; 'cancelled' and
    -- 'deleted' (an unfinished job deleted) also cancel its own children; 'gone' (a finished job
    -- deleted) only cancels its children. Answers 1, to be counted.
    CREATE FUNCTION ${s}.job_flow_ended(
      id bigint, parent bigint, children_left integer, policy text, outcome text, error text,
      stamp timestamptz
    ) RETURNS integer LANGUAGE plpgsql AS $fn$
    BEGIN
      IF children_left IS NOT NULL AND outcome IN ('cancelled', 'deleted', 'gone') THEN
        PERFORM ${s}.job_flow_cancel_children(id, stamp);
      END IF;
      IF parent IS NOT NULL AND outcome <> 'gone' THEN
        PERFORM ${s}.job_flow_settle(id, parent, policy, outcome, error, stamp);
      END IF;
      RETURN 1;
    END
    $fn$;
  `;
  },
};
