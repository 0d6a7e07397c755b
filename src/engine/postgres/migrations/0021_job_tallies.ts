import type { Migration } from './migration.js';

/**
 * What a job deleted as it completes (`removeOnComplete`, `removeOnAck`) leaves for the trends
 * (decision 0270): the statement that deletes it counts its completion, its latest claim's
 * start (by pickup latency bucket, core/pickup-buckets.ts) and its failed attempts here, per
 * minute, in the same transaction, so each event is on a job row or in a tally, never both and
 * never neither. Rows are keyed by the writing backend too (`pg_backend_pid()`): two
 * transactions running at once never upsert the same row, so a completion inside a caller's
 * long transaction holds up no other. The trends record drops the rows of minutes it will not
 * cover again; the table holds a minute or two.
 */
export const jobTallies: Migration = {
  version: 21,
  name: 'job_tallies',
  up: (s) => `
    CREATE TABLE ${s}.job_tallies (
      minute   timestamptz NOT NULL CHECK (date_bin('1 minute', minute, '2000-01-01 00:00:00+00') = minute),
      queue    text        NOT NULL,
      backend  integer     NOT NULL,
      event    text        NOT NULL CHECK (event IN ('completed', 'failed', 'started')),
      bucket   smallint    NOT NULL CHECK (bucket BETWEEN 0 AND 127),
      jobs     integer     NOT NULL CHECK (jobs > 0),
      PRIMARY KEY (minute, queue, backend, event, bucket)
    );
  `,
};
