import type { Migration } from './migration.js';

/**
 * Server epochs: failover-safe tokens (issue 22, decision 0225).
 *
 * Under asynchronous replication a promotion can lose commits that were already acknowledged,
 * among them a token increment: the next acquirer would be handed a token that a holder still
 * has. Every token therefore carries the epoch of the server history it was issued in, in its
 * high bits: `token = epoch * 2^32 + n`. An epoch is one (timeline, system identifier) pair of
 * the server; the first token statement on a new pair (a promoted standby, a restored backup,
 * an upgraded cluster) fails with SQLSTATE LHE01, the engine then records the next epoch in a
 * statement of its own that commits durably (`begin_epoch`), and the token statement runs again.
 * A new term's token is `greatest(previous + 1, epoch * 2^32 + 1)`: above every token of every
 * earlier epoch (fewer than 2^32 terms per resource per epoch), whether or not the previous
 * term's row survived. 2^21 epochs keep every token a safe JavaScript integer.
 *
 * A new epoch starts with a quarantine: until `quarantine_until` no new term is granted (SQLSTATE
 * LHQ01, reported as `unavailable` with a retry-after), so that every holder whose grant was lost
 * has passed its trust deadline before anyone else is let in. Its length is the longest ttl the
 * surviving rows show (leases, lease locks, jobs in flight), and at least 5 s, which covers the
 * connection-lock probes (1 s interval + 2 s timeout by default).
 *
 * The epoch that exists when this migration runs is epoch 0, with no quarantine: tokens already
 * handed out are below 2^32 and stay valid, and new terms go on from them.
 *
 * `server_identity` caches the system identifier in a session setting (it is read from
 * pg_control, a file): a session never changes servers, but it may live through a promotion,
 * so the timeline is read on every call.
 */
export const epochs: Migration = {
  version: 7,
  name: 'epochs',
  up: (s) => `
    CREATE TABLE ${s}.epochs (
      epoch            integer     PRIMARY KEY CHECK (epoch >= 0 AND epoch < 2097152),
      timeline         integer     NOT NULL,
      system_id        text        NOT NULL,
      began_at         timestamptz NOT NULL,
      quarantine_until timestamptz NOT NULL
    );

    CREATE FUNCTION ${s}.server_identity(OUT timeline integer, OUT system_id text)
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      IF pg_is_in_recovery() THEN
        RAISE EXCEPTION 'this server is a standby: tokens are handed out by the primary only'
          USING ERRCODE = '25006';
      END IF;
      timeline := ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer;
      system_id := nullif(current_setting('leasehold.system_id', true), '');
      IF system_id IS NULL THEN
        SELECT c.system_identifier::text INTO system_id FROM pg_control_system() c;
        PERFORM set_config('leasehold.system_id', system_id, false);
      END IF;
    END
    $fn$;

    CREATE FUNCTION ${s}.token_epoch(OUT epoch integer, OUT token_floor bigint, OUT quarantine_until timestamptz)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      here record;
      newest record;
    BEGIN
      SELECT * INTO here FROM ${s}.server_identity();
      SELECT e.epoch, e.timeline, e.system_id, e.quarantine_until INTO newest
        FROM ${s}.epochs e ORDER BY e.epoch DESC LIMIT 1;
      IF NOT FOUND OR newest.timeline <> here.timeline OR newest.system_id <> here.system_id THEN
        RAISE EXCEPTION 'a new server epoch begins (timeline %, system %)', here.timeline, here.system_id
          USING ERRCODE = 'LHE01';
      END IF;
      epoch := newest.epoch;
      token_floor := newest.epoch::bigint << 32;
      quarantine_until := newest.quarantine_until;
    END
    $fn$;

    CREATE FUNCTION ${s}.begin_epoch() RETURNS integer
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
        (SELECT max(extract(epoch FROM j.lease_expires_at - j.updated_at) * 1000)
           FROM ${s}.jobs j WHERE j.status = 'processing'));
      INSERT INTO ${s}.epochs (epoch, timeline, system_id, began_at, quarantine_until)
        VALUES (coalesce(newest.epoch + 1, 0), here.timeline, here.system_id, now(),
                now() + quarantine_ms * interval '1 millisecond');
      RETURN coalesce(newest.epoch + 1, 0);
    END
    $fn$;

    CREATE FUNCTION ${s}.refuse_new_term(until timestamptz, at timestamptz) RETURNS boolean
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      RAISE EXCEPTION 'no new term until the failover quarantine ends at %', until
        USING ERRCODE = 'LHQ01',
              DETAIL = greatest(1, ceil(extract(epoch FROM until - at) * 1000))::bigint::text;
    END
    $fn$;

    INSERT INTO ${s}.epochs (epoch, timeline, system_id, began_at, quarantine_until)
      SELECT 0, i.timeline, i.system_id, now(), '-infinity' FROM ${s}.server_identity() i;
  `,
};
