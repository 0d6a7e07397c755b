import type { Migration } from './migration.js';

/**
 * What kind of worker a row is (issue 30, decision 0264): `library`, a worker of this toolkit
 * in some process (every row so far), or `http`, a task worker that claims over the HTTP API
 * and registers itself through it, so an operator sees both kinds in one list. A column with a
 * constant default is added without rewriting the table.
 */
export const workerKind: Migration = {
  version: 17,
  name: 'worker_kind',
  up: (s) => `
    ALTER TABLE ${s}.workers ADD COLUMN kind text NOT NULL DEFAULT 'library'
      CONSTRAINT workers_kind_known CHECK (kind IN ('library', 'http'));
  `,
};
