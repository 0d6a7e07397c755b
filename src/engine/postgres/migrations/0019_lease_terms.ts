import type { Migration } from './migration.js';

/**
 * The history of lease and lease-lock terms (issue 30 part 6, decision 0267). A term is
 * recorded when the next one begins: an AFTER UPDATE trigger whose WHEN clause (evaluated by
 * the executor, without calling the function) holds only when the token changes, inside the
 * acquire statement itself, so no statement or round trip is added and renew and release write
 * nothing extra. A trigger sees the replaced row as it was (OLD), which an upsert's RETURNING
 * cannot show before PostgreSQL 18.
 *
 * Recording costs the lease acquire about half again its execution time and three quarters
 * again its WAL (bench/lease-terms-ab.ts), so for leases it is off until an operator turns it
 * on (`lh.leases.setTermRecording(true)`: ENABLE TRIGGER); lease locks, whose terms change
 * rarely (elections), always record.
 *
 * The key (kind, resource, token) is the table's only index: a token is never reused on a row
 * (rows are never deleted), so it identifies a term; listing and pruning walk it.
 */
export const leaseTerms: Migration = {
  version: 19,
  name: 'lease_terms',
  up: (s) => `
    CREATE TABLE ${s}.lease_terms (
      kind        text        NOT NULL CHECK (kind IN ('lease', 'lock')),
      resource    text        NOT NULL,
      token       bigint      NOT NULL,
      holder      text        NOT NULL,
      started_at  timestamptz NOT NULL,
      ended_at    timestamptz NOT NULL,
      ended       text        NOT NULL CHECK (ended IN ('released', 'expired', 'superseded')),
      PRIMARY KEY (kind, resource, token)
    );

    CREATE FUNCTION ${s}.record_lease_term() RETURNS trigger
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      INSERT INTO ${s}.lease_terms (kind, resource, token, holder, started_at, ended_at, ended)
      VALUES ('lease', OLD.resource, OLD.token, OLD.holder, OLD.acquired_at,
              CASE WHEN OLD.released_at IS NULL THEN OLD.expires_at
                   ELSE least(OLD.released_at, OLD.expires_at) END,
              CASE WHEN OLD.released_at IS NULL THEN 'expired' ELSE 'released' END)
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END
    $fn$;

    CREATE FUNCTION ${s}.record_lease_lock_term() RETURNS trigger
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      INSERT INTO ${s}.lease_terms (kind, resource, token, holder, started_at, ended_at, ended)
      VALUES ('lock', OLD.name, OLD.token, OLD.holder, OLD.acquired_at,
              CASE WHEN OLD.released_at IS NULL THEN OLD.expires_at
                   ELSE least(OLD.released_at, OLD.expires_at) END,
              CASE WHEN OLD.released_at IS NULL THEN 'expired' ELSE 'released' END)
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END
    $fn$;

    CREATE TRIGGER leases_record_term AFTER UPDATE OF token ON ${s}.leases
      FOR EACH ROW WHEN (OLD.token IS DISTINCT FROM NEW.token)
      EXECUTE FUNCTION ${s}.record_lease_term();
    ALTER TABLE ${s}.leases DISABLE TRIGGER leases_record_term;
    CREATE TRIGGER lease_locks_record_term AFTER UPDATE OF token ON ${s}.lease_locks
      FOR EACH ROW WHEN (OLD.token IS DISTINCT FROM NEW.token)
      EXECUTE FUNCTION ${s}.record_lease_lock_term();
  `,
};
