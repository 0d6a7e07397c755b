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
 * - The triggers settle a parent in the transaction that finishes its child, whatever path
 *   finishes it (complete, fail to dead, rescue to dead, cancel, delete, bulk operations, a
 *   caller's transaction). Their WHEN clauses let through only rows of a flow: a job outside
 *   one (both columns NULL) queues no trigger event and costs one test of two NULL columns.
 *   The row's own `updated_at` (the finishing statement's clock) dates what they write; a
 *   delete, which carries no new time, uses the transaction's.
 * - `job_flow_cancel_children(parent, at)`: a cancelled or deleted parent cancels its pending
 *   and waiting children; each of those, cancelled, does the same for its own (recursion
 *   through the trigger). Running children finish.
 * - Notifications as the statements send them: `jobs|<queue>` when a parent becomes claimable
 *   or a partitioned pending job is cancelled, `job-finished|<id>` for waited-for jobs that end.
 *   Per row here (PostgreSQL sends identical ones once per transaction).
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

    CREATE FUNCTION ${s}.job_flow_cancel_children(parent bigint, stamp timestamptz) RETURNS void
    LANGUAGE plpgsql AS $fn$
    DECLARE
      sent bigint;
    BEGIN
      WITH gone AS (
        UPDATE ${s}.jobs j SET
          status = 'cancelled', finished_at = stamp, lease_expires_at = NULL, updated_at = stamp
        WHERE j.parent_id = parent AND j.status IN ('pending', 'waiting')
        RETURNING j.id, j.queue, j.partition_key, j.waited
      ),
      woken AS (
        SELECT count(pg_notify(${channel}, '${JOBS_TOPIC}|' || q.queue)) AS n
        FROM (SELECT DISTINCT queue FROM gone WHERE partition_key IS NOT NULL) q
      ),
      finished AS (
        SELECT count(pg_notify(${channel}, '${JOB_FINISHED_TOPIC}|' || g.id)) AS n FROM gone g WHERE g.waited
      )
      SELECT woken.n + finished.n INTO sent FROM woken, finished;
    END
    $fn$;

    CREATE FUNCTION ${s}.job_flow_transition() RETURNS trigger
    LANGUAGE plpgsql AS $fn$
    DECLARE
      child record;
      stamp timestamptz;
      outcome text;
      parent record;
      reason text;
    BEGIN
      IF TG_OP = 'DELETE' THEN
        child := OLD;
        stamp := now();
        IF OLD.children_left IS NOT NULL THEN
          PERFORM ${s}.job_flow_cancel_children(OLD.id, stamp);
        END IF;
        IF OLD.parent_id IS NULL OR OLD.status IN ('completed', 'dead', 'cancelled') THEN
          RETURN NULL;
        END IF;
        -- Only a completion with removal deletes a processing job.
        outcome := CASE WHEN OLD.status = 'processing' THEN 'completed' ELSE 'deleted' END;
      ELSE
        child := NEW;
        stamp := NEW.updated_at;
        IF NEW.status = 'cancelled' AND NEW.children_left IS NOT NULL THEN
          PERFORM ${s}.job_flow_cancel_children(NEW.id, stamp);
        END IF;
        IF NEW.parent_id IS NULL OR NEW.status NOT IN ('completed', 'dead', 'cancelled')
           OR OLD.status IN ('completed', 'dead', 'cancelled') THEN
          RETURN NULL;
        END IF;
        outcome := NEW.status;
      END IF;

      -- Locked: the children of one parent finishing at once settle it one after another.
      SELECT p.id, p.queue, p.status, p.children_left, p.available_at, p.waited INTO parent
      FROM ${s}.jobs p WHERE p.id = child.parent_id FOR UPDATE;
      -- Gone, or no longer waiting (dead, cancelled, retried): a late child changes nothing.
      IF NOT FOUND OR parent.status <> 'waiting' THEN
        RETURN NULL;
      END IF;

      IF outcome = 'completed' OR child.parent_policy = 'ignore' THEN
        UPDATE ${s}.jobs SET
          children_left = children_left - 1,
          status = CASE WHEN children_left <= 1 THEN 'pending' ELSE 'waiting' END,
          updated_at = stamp
        WHERE id = parent.id;
        IF parent.children_left <= 1 AND parent.available_at <= stamp THEN
          PERFORM pg_notify(${channel}, '${JOBS_TOPIC}|' || parent.queue);
        END IF;
        RETURN NULL;
      END IF;

      reason := 'child #' || child.id || CASE outcome
        WHEN 'dead' THEN ' failed: ' || coalesce(child.last_error, 'no error recorded')
        WHEN 'cancelled' THEN ' was cancelled'
        ELSE ' was deleted before it completed' END;
      UPDATE ${s}.jobs j SET
        status = 'dead', children_left = j.children_left - 1, finished_at = stamp, updated_at = stamp,
        last_error = reason,
        errors = (
          SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]'::jsonb)
          FROM jsonb_array_elements(j.errors || jsonb_build_array(jsonb_build_object(
                 'attempt', j.attempts,
                 'at', to_char(stamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 'error', reason))) WITH ORDINALITY AS e(value, n)
          WHERE e.n > jsonb_array_length(j.errors) + 1 - 20)
      WHERE j.id = parent.id;
      IF parent.waited THEN
        PERFORM pg_notify(${channel}, '${JOB_FINISHED_TOPIC}|' || parent.id);
      END IF;
      IF child.parent_policy = 'cancel-siblings' THEN
        PERFORM ${s}.job_flow_cancel_children(parent.id, stamp);
      END IF;
      RETURN NULL;
    END
    $fn$;

    CREATE TRIGGER jobs_flow_update AFTER UPDATE OF status ON ${s}.jobs
      FOR EACH ROW
      WHEN ((NEW.parent_id IS NOT NULL OR NEW.children_left IS NOT NULL)
            AND OLD.status IS DISTINCT FROM NEW.status)
      EXECUTE FUNCTION ${s}.job_flow_transition();
    CREATE TRIGGER jobs_flow_delete AFTER DELETE ON ${s}.jobs
      FOR EACH ROW
      WHEN (OLD.parent_id IS NOT NULL OR OLD.children_left IS NOT NULL)
      EXECUTE FUNCTION ${s}.job_flow_transition();
  `;
  },
};
