import type { Migration } from './migration.js';

/**
 * Session-lock terms, each recorded in a committed row (issue 21, decision 0217). A session
 * lock's token used to be a bare `nextval` inside the holder's transaction, which stays open for
 * the term and ends with ROLLBACK: a sequence's WAL record is flushed only when a transaction
 * that wrote it commits, so after a crash the sequence came back behind a token already handed
 * out. The token is now drawn on the pool by an INSERT into this table that commits (with its
 * WAL, and so the sequence's, flushed) before the holder sees it. The sequence still supplies
 * the value, so tokens keep growing across the upgrade; the row records each name's newest term.
 */
export const sessionLockTerms: Migration = {
  version: 6,
  name: 'session_lock_terms',
  up: (s) => `
    CREATE TABLE ${s}.session_lock_terms (
      name       text        PRIMARY KEY,
      token      bigint      NOT NULL CHECK (token > 0),
      granted_at timestamptz NOT NULL
    );
  `,
};
