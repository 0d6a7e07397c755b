/**
 * Every SQL statement of the semaphore family, named EntityVerb (decision 0240, migration 9).
 * Parameters are always bound; the quoted schema is the only spliced text. Time-sensitive
 * statements read `coalesce($now, now())`, so the database clock decides unless a test pins it.
 * No SQL comments inside statements: the benchmark runs statements through pgbench on one line.
 */
import { DURABLE_CLOCK } from './durable-commit.js';
import { EPOCH_CTE, NEXT_TERM, QUARANTINE_GATE } from './epoch-sql.js';

export const PERMIT_COLUMNS =
  'p.name, p.slot, p.holder, p.token, p.ttl_ms, p.renew_count, p.acquired_at, p.renewed_at, p.released_at, p.expires_at';

const CLOCK = (param: string): string =>
  `WITH clock AS (SELECT coalesce(${param}::timestamptz, now()) AS now)`;

const MS = "* interval '1 millisecond'";

/** Decided in SQL with the microseconds a JS Date drops (as the lease statements do). */
const STATE = (now: string): string =>
  `CASE WHEN p.released_at IS NOT NULL THEN 'released' WHEN p.expires_at > ${now} THEN 'active' ELSE 'expired' END AS state`;

export interface SemaphoreQueries {
  SemaphoreAcquire: string;
  SemaphoreEnsure: string;
  SemaphoreWait: string;
  SemaphoreRenew: string;
  SemaphoreRelease: string;
  SemaphoreList: string;
}

export function semaphoreQueries(s: string): SemaphoreQueries {
  const returning = `RETURNING ${PERMIT_COLUMNS}, clock.now AS db_now, ${STATE('clock.now')}`;
  // A valid permit held by `holder` with `token` on the slot. A released one has expired at its
  // release, so validity is one comparison.
  const owned = `p.name = $1 AND p.slot = $2::integer AND p.holder = $3 AND p.token = $4::bigint
        AND p.expires_at > clock.now`;
  return {
    // $1 name, $2 holder, $3 permits, $4 ttl_ms, $5 now.
    // `free` locks the lowest free slot below the permits, skipping slots another statement has
    // locked; its test reads the slot row's own columns only, so the EvalPlanQual re-check of a
    // row changed since the snapshot decides on the newest version. `counter` then bumps the
    // name's token under the name row's lock (acquirers of a name wait there for one another,
    // so tokens grow in commit order); no new permit is granted during a failover quarantine.
    // Nothing at all is granted when the slot rows or the name row are missing: the engine then
    // creates them (SemaphoreEnsure) and tries again.
    SemaphoreAcquire: `${DURABLE_CLOCK('$5')}, ${EPOCH_CTE(s)},
      free AS (
        SELECT f.slot FROM ${s}.semaphore_slots f
        WHERE f.name = $1 AND f.slot < $3::integer AND f.expires_at <= (SELECT now FROM clock)
        ORDER BY f.slot
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      ),
      counter AS (
        UPDATE ${s}.semaphores c SET token = ${NEXT_TERM('c.token')}
        FROM free, clock, epoch
        WHERE c.name = $1 AND ${QUARANTINE_GATE(s, 'true')}
        RETURNING c.token
      )
      UPDATE ${s}.semaphore_slots p SET
        holder = $2, token = counter.token, ttl_ms = $4::integer, renew_count = 0,
        acquired_at = clock.now, renewed_at = NULL, released_at = NULL,
        expires_at = clock.now + $4::integer ${MS}
      FROM free, counter, clock
      WHERE p.name = $1 AND p.slot = free.slot
      ${returning}`,

    // $1 name, $2 permits, $3 now. Creates the name row (token 0: the first grant draws the
    // epoch's first term) and the slot rows 0 .. permits-1, in one transaction, so `slots` never
    // counts a row that does not exist. The slot rows are inserted only once the name row is
    // locked (they read `semaphore`), so two of these cannot wait for each other's rows.
    SemaphoreEnsure: `${CLOCK('$3')},
      semaphore AS (
        INSERT INTO ${s}.semaphores AS c (name, token, slots, created_at)
        SELECT $1, 0, $2::integer, clock.now FROM clock
        ON CONFLICT (name) DO UPDATE SET slots = greatest(c.slots, excluded.slots)
        RETURNING c.slots
      )
      INSERT INTO ${s}.semaphore_slots (name, slot)
      SELECT $1, g.slot FROM semaphore, generate_series(0, $2::integer - 1) AS g(slot)
      ON CONFLICT (name, slot) DO NOTHING`,

    // $1 name, $2 permits, $3 now. After a refused acquire: whether the slots exist, and when
    // the first valid permit below the permits expires unless renewed. 0 when fewer than
    // `permits` are valid: a slot is free now (the refused look predated its release, or its
    // creation by another caller), or is locked by a statement about to free it.
    SemaphoreWait: `${CLOCK('$3')},
      held AS (
        SELECT count(*) AS valid, min(p.expires_at) AS first_expiry FROM ${s}.semaphore_slots p, clock
        WHERE p.name = $1 AND p.slot < $2::integer AND p.expires_at > clock.now
      )
      SELECT coalesce((SELECT c.slots FROM ${s}.semaphores c WHERE c.name = $1), 0) AS slots,
        CASE WHEN held.valid < $2::integer THEN 0
          ELSE greatest(0, ceil(extract(epoch FROM held.first_expiry - clock.now) * 1000)) END::float8
          AS retry_after_ms
      FROM clock, held`,

    // $1 name, $2 slot, $3 holder, $4 token, $5 ttl_ms, $6 now
    SemaphoreRenew: `${CLOCK('$6')}
      UPDATE ${s}.semaphore_slots p SET
        renewed_at = clock.now, renew_count = p.renew_count + 1, ttl_ms = $5::integer,
        expires_at = clock.now + $5::integer ${MS}
      FROM clock
      WHERE ${owned}
      ${returning}`,

    // $1 name, $2 slot, $3 holder, $4 token, $5 now, $6 notify channel, $7 wake key.
    // The slot is free from this instant; waiters are told inline.
    SemaphoreRelease: `${CLOCK('$5')}
      UPDATE ${s}.semaphore_slots p SET released_at = clock.now, expires_at = clock.now
      FROM clock
      WHERE ${owned}
      ${returning}, pg_notify($6, 'locks|' || $7::text) AS notified`,

    // $1 name, $2 now
    SemaphoreList: `${CLOCK('$2')}
      SELECT ${PERMIT_COLUMNS}, clock.now AS db_now, ${STATE('clock.now')}
      FROM ${s}.semaphore_slots p, clock
      WHERE p.name = $1 AND p.expires_at > clock.now
      ORDER BY p.slot`,
  };
}
