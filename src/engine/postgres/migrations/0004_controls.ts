import type { Migration } from './migration.js';

/** Settings every instance must agree on (e.g. whether the generator runs). */
export const controls: Migration = {
  version: 4,
  name: 'controls',
  up: (s) => `
    CREATE TABLE ${s}.controls (
      name       text        PRIMARY KEY,
      value      jsonb       NOT NULL,
      updated_at timestamptz NOT NULL,
      updated_by text        NOT NULL
    );
  `,
};
