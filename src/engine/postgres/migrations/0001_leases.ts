import type { Migration } from './migration.js';

/**
 * Leases. Rows are never deleted: the row carries the resource's token, and deleting it would
 * let the next acquisition start again at token 1, handing out a token that was already used.
 */
export const leases: Migration = {
  version: 1,
  name: 'leases',
  up: (s) => `
    CREATE TABLE ${s}.leases (
      id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      resource     text        NOT NULL UNIQUE,
      holder       text        NOT NULL,
      token        bigint      NOT NULL,
      metadata     jsonb,
      ttl_ms       integer     NOT NULL CHECK (ttl_ms > 0),
      renew_count  integer     NOT NULL DEFAULT 0,
      created_at   timestamptz NOT NULL,
      acquired_at  timestamptz NOT NULL,
      renewed_at   timestamptz,
      released_at  timestamptz,
      expires_at   timestamptz NOT NULL,
      CHECK (token > 0)
    );
    -- Listing active or expired leases scans only the unreleased ones.
    CREATE INDEX leases_unreleased_expires_at ON ${s}.leases (expires_at) WHERE released_at IS NULL;
  `,
};
