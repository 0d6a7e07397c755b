import type { Migration } from './migration.js';

/**
 * Counting semaphores (issue 26, decision 0240): `lh.locks.semaphore(name, { permits })`.
 *
 * One row per permit slot, `(name, slot)`. A slot is free when its `expires_at` has passed (a
 * release sets it to the release's instant; a slot never taken holds `-infinity`), so the test
 * an acquire makes reads only the slot row's own columns: taken with FOR UPDATE SKIP LOCKED,
 * a row another acquirer changed meanwhile is re-checked on its newest version (EvalPlanQual),
 * and two acquirers can never both take one slot. A subquery on another table would be read
 * from the statement's old snapshot during that re-check, hence no such thing in the test.
 *
 * `semaphores` holds one row per name: the token counter (every grant bumps it under the row's
 * lock, so tokens of a name grow in commit order, above the epoch's floor as lease terms do) and
 * `slots`, how many slot rows (0 .. slots-1) exist, all created in the transaction that raised it.
 *
 * `begin_epoch` is redefined so that a failover quarantine also outlasts the longest permit ttl:
 * otherwise a permit whose grant a lossy promotion dropped could still be trusted by its holder
 * while its slot is handed to someone else. Its body is migration 7's, plus that one term.
 */
export const semaphores: Migration = {
  version: 9,
  name: 'semaphores',
  up: (s) => `
    CREATE TABLE ${s}.semaphores (
      name       text        PRIMARY KEY,
      token      bigint      NOT NULL CHECK (token >= 0),
      slots      integer     NOT NULL CHECK (slots > 0),
      created_at timestamptz NOT NULL
    );

    CREATE TABLE ${s}.semaphore_slots (
      name        text        NOT NULL,
      slot        integer     NOT NULL CHECK (slot >= 0),
      holder      text,
      token       bigint,
      ttl_ms      integer     NOT NULL DEFAULT 0,
      renew_count integer     NOT NULL DEFAULT 0,
      acquired_at timestamptz,
      renewed_at  timestamptz,
      released_at timestamptz,
      expires_at  timestamptz NOT NULL DEFAULT '-infinity',
      PRIMARY KEY (name, slot)
    );

    CREATE OR REPLACE FUNCTION ${s}.begin_epoch() RETURNS integer
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      here record;
      newest record;
      quarantine_ms float8;
    BEGIN
      SELECT * INTO here FROM ${s}.server_identity();
      -- One writer at a time; plain reads of the table (token_epoch) go on.
      LOCK TABLE ${s}.epochs IN EXCLUSIVE MODE;
      SELECT e.epoch, e.timeline, e.system_id INTO newest
        FROM ${s}.epochs e ORDER BY e.epoch DESC LIMIT 1;
      IF FOUND AND newest.timeline = here.timeline AND newest.system_id = here.system_id THEN
        RETURN newest.epoch;
      END IF;
      quarantine_ms := greatest(
        5000,
        (SELECT max(l.ttl_ms) FROM ${s}.leases l),
        (SELECT max(l.ttl_ms) FROM ${s}.lease_locks l),
        (SELECT max(p.ttl_ms) FROM ${s}.semaphore_slots p),
        (SELECT max(extract(epoch FROM j.lease_expires_at - j.updated_at) * 1000)
           FROM ${s}.jobs j WHERE j.status = 'processing'));
      INSERT INTO ${s}.epochs (epoch, timeline, system_id, began_at, quarantine_until)
        VALUES (coalesce(newest.epoch + 1, 0), here.timeline, here.system_id, now(),
                now() + quarantine_ms * interval '1 millisecond');
      RETURN coalesce(newest.epoch + 1, 0);
    END
    $fn$;
  `,
};
