import type { Migration } from './migration.js';

/**
 * Locks, elections, schedule slots and fences.
 *
 * - `session_locks`: one row per session-lock name, only ever row-locked (FOR UPDATE) by the
 *   holder's open transaction; tokens come from `session_lock_tokens`, a sequence, because a
 *   sequence value is never rolled back with a transaction that dies with its connection.
 * - `lease_locks`: lease locks and elections. Like leases, rows are never deleted (the row
 *   carries the token). `quiet_ms` and `delay_ms` are the gaps the term's holder asked for.
 * - `schedule_slots`: the primary key is what makes a slot run at most once.
 * - `fences`: the newest token seen per scope.
 */
export const locks: Migration = {
  version: 2,
  name: 'locks',
  up: (s) => `
    CREATE TABLE ${s}.session_locks (
      name text PRIMARY KEY
    );
    CREATE SEQUENCE ${s}.session_lock_tokens AS bigint START 1 NO CYCLE;

    CREATE TABLE ${s}.lease_locks (
      id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name         text        NOT NULL UNIQUE,
      holder       text        NOT NULL,
      token        bigint      NOT NULL CHECK (token > 0),
      ttl_ms       integer     NOT NULL CHECK (ttl_ms > 0),
      quiet_ms     integer     NOT NULL DEFAULT 0 CHECK (quiet_ms >= 0),
      delay_ms     integer     NOT NULL DEFAULT 0 CHECK (delay_ms >= 0),
      renew_count  integer     NOT NULL DEFAULT 0,
      created_at   timestamptz NOT NULL,
      acquired_at  timestamptz NOT NULL,
      renewed_at   timestamptz,
      released_at  timestamptz,
      expires_at   timestamptz NOT NULL
    );

    CREATE TABLE ${s}.schedule_slots (
      name       text        NOT NULL,
      slot       timestamptz NOT NULL,
      holder     text        NOT NULL,
      token      bigint,
      claimed_at timestamptz NOT NULL,
      PRIMARY KEY (name, slot)
    );

    CREATE TABLE ${s}.fences (
      scope      text        PRIMARY KEY,
      token      bigint      NOT NULL,
      updated_at timestamptz NOT NULL
    );
  `,
};
