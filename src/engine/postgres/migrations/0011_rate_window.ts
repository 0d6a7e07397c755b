import type { Migration } from './migration.js';

/**
 * The rate's window stays exact when claims reach the `queues` row out of order (decision 0243).
 *
 * A claim's instant is its statement's `now`, fixed when the statement starts, while its update
 * of the row happens later, under the row lock. A slow claim (a loaded server) can therefore
 * append an instant older than one a faster claim already appended and pruned by, and version 8
 * pruned each window at the appender's own instant: the slow claim no longer saw starts that
 * shared its window, and the old CHECK (at most `rate_limit` instants in the array) let a
 * seventh start into a window of five. The failover chaos run found it.
 *
 * - `starts` now keeps every instant of the last two windows (pruned below the newest instant
 *   minus 2 x per), and `rate_claim_at` records the instant of the claim that wrote the row
 *   last (NULL after `configure`, which trims the array to the new limit itself).
 * - `queues_rate_exact` checks that claim's windows exactly: it is refused (23514, the claim
 *   runs again with a newer instant) if its instant is more than one window older than the
 *   newest, since starts it needed may have been pruned, or if any window of `per` containing
 *   its instant holds more than `rate_limit` starts.
 */
export const rateWindow: Migration = {
  version: 11,
  name: 'rate_window',
  up: (s) => `
    ALTER TABLE ${s}.queues ADD COLUMN rate_claim_at timestamptz;

    CREATE FUNCTION ${s}.rate_window_holds(
      starts timestamptz[], claim_at timestamptz, per_ms integer, lim integer
    ) RETURNS boolean LANGUAGE sql IMMUTABLE AS $fn$
      SELECT claim_at IS NULL OR lim IS NULL OR (
        claim_at >= (SELECT max(t) FROM unnest(starts) AS u(t)) - per_ms * interval '1 millisecond'
        AND NOT EXISTS (
          SELECT 1 FROM (
            -- each start t with the number of starts in (t - per, t]
            SELECT u.t, count(*) OVER (ORDER BY u.t RANGE BETWEEN
                     per_ms * interval '1 millisecond' - interval '1 microsecond' PRECEDING
                     AND CURRENT ROW) AS n
            FROM unnest(starts) AS u(t)
          ) w
          -- the windows holding claim_at end in [claim_at, claim_at + per); the fullest ends on a start
          WHERE w.t >= claim_at AND w.t < claim_at + per_ms * interval '1 millisecond'
            AND w.n > lim))
    $fn$;

    ALTER TABLE ${s}.queues DROP CONSTRAINT queues_rate_exact,
      ADD CONSTRAINT queues_rate_exact
        CHECK (${s}.rate_window_holds(starts, rate_claim_at, rate_per_ms, rate_limit));
  `,
};
