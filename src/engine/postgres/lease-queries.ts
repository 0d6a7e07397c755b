/**
 * Every SQL statement of the lease family, named EntityVerb. Parameters are always bound; the
 * quoted schema is the only spliced text. Each time-sensitive statement reads
 * `coalesce($now, now())`, so the database clock decides unless a test pins it.
 */
import type { LeaseListFilter } from '../../core/types.js';
import { DURABLE_CLOCK } from './durable-commit.js';
import { EPOCH_CTE, FIRST_TERM, NEXT_TERM, QUARANTINE_GATE } from './epoch-sql.js';

export const LEASE_COLUMNS =
  'l.id, l.resource, l.holder, l.token, l.metadata, l.ttl_ms, l.renew_count, l.created_at, l.acquired_at, l.renewed_at, l.released_at, l.expires_at';

const CLOCK = (param: string): string =>
  `WITH clock AS (SELECT coalesce(${param}::timestamptz, now()) AS now)`;

/**
 * The lease's state, decided in SQL at the statement's `now` with the microseconds that a JS
 * Date drops: compared in JS, a lease read within a millisecond of its expiry looked expired
 * while the same statement's guards still treated it as live.
 */
const STATE = (now: string): string =>
  `CASE WHEN l.released_at IS NOT NULL THEN 'released' WHEN l.expires_at > ${now} THEN 'active' ELSE 'expired' END AS state`;

export interface LeaseQueries {
  LeaseAcquire: string;
  LeaseRenew: string;
  LeaseRelease: string;
  LeaseReleaseById: string;
  LeaseAcquireMany: string;
  LeaseRenewMany: string;
  LeaseReleaseMany: string;
  LeaseGet: string;
  LeaseGetById: string;
  LeaseList: Record<LeaseListFilter, string>;
  LeaseCountActive: string;
}

const LIST_PREDICATES: Record<LeaseListFilter, string> = {
  all: 'true',
  active: 'l.released_at IS NULL AND l.expires_at > clock.now',
  expired: 'l.released_at IS NULL AND l.expires_at <= clock.now',
  renewed: 'l.renew_count > 0',
  released: 'l.released_at IS NOT NULL',
};

const renewSet = (ttl: string): string =>
  `renewed_at = clock.now, renew_count = l.renew_count + 1, ttl_ms = ${ttl},
        expires_at = clock.now + ${ttl} * interval '1 millisecond'`;

const RELEASE_SET = 'released_at = clock.now, expires_at = least(l.expires_at, clock.now)';

/** Held live by `holder`, with `token` unless it is null (seed-000 clients that never saw one). */
const ownedLive = (holder: string, token: string): string =>
  `l.holder = ${holder} AND (${token} IS NULL OR l.token = ${token})
        AND l.released_at IS NULL AND l.expires_at > clock.now`;

export function leaseQueries(s: string): LeaseQueries {
  // The current holder re-acquiring its own live lease: extend it and keep the token, so a
  // retried acquire whose answer was lost does not lock out its own sender.
  const liveSameHolder =
    'l.holder = excluded.holder AND l.released_at IS NULL AND l.expires_at > excluded.acquired_at';
  const list = {} as Record<LeaseListFilter, string>;
  for (const [filter, predicate] of Object.entries(LIST_PREDICATES) as [
    LeaseListFilter,
    string,
  ][]) {
    list[filter] = `${CLOCK('$4')}
      SELECT ${LEASE_COLUMNS}, clock.now AS db_now, ${STATE('clock.now')} FROM ${s}.leases l, clock
      WHERE ${predicate} AND ($3::text IS NULL OR starts_with(l.resource, $3::text))
      ORDER BY l.id LIMIT $1 OFFSET $2`;
  }
  // Whether acquiring `resource` for `holder` starts a new term (anything but its live holder
  // re-acquiring): only then does a failover quarantine refuse it (decision 0225).
  const grantsNewTerm = (resource: string, holder: string): string =>
    `NOT EXISTS (SELECT 1 FROM ${s}.leases h WHERE h.resource = ${resource} AND h.holder = ${holder}
       AND h.released_at IS NULL AND h.expires_at > clock.now)`;
  const acquireConflict = `ON CONFLICT (resource) DO UPDATE SET
        token       = CASE WHEN ${liveSameHolder} THEN l.token ELSE ${NEXT_TERM('l.token')} END,
        acquired_at = CASE WHEN ${liveSameHolder} THEN l.acquired_at
                           ELSE greatest(excluded.acquired_at, l.released_at) END,
        renewed_at  = CASE WHEN ${liveSameHolder} THEN excluded.acquired_at ELSE NULL END,
        renew_count = CASE WHEN ${liveSameHolder} THEN l.renew_count + 1 ELSE 0 END,
        metadata    = CASE WHEN ${liveSameHolder} THEN coalesce(excluded.metadata, l.metadata) ELSE excluded.metadata END,
        holder      = excluded.holder,
        ttl_ms      = excluded.ttl_ms,
        released_at = NULL,
        expires_at  = excluded.expires_at
      WHERE (l.released_at IS NOT NULL OR l.expires_at <= excluded.acquired_at OR l.holder = excluded.holder)
        AND (${liveSameHolder} OR excluded.acquired_at >= (SELECT quarantine_until FROM epoch))
      RETURNING ${LEASE_COLUMNS}, (SELECT now FROM clock) AS db_now,
        ${STATE('(SELECT now FROM clock)')}`;
  const returning = `RETURNING ${LEASE_COLUMNS}, clock.now AS db_now, ${STATE('clock.now')}`;
  return {
    // $1 resource, $2 holder, $3 ttl_ms, $4 metadata, $5 now
    // A new term starts no earlier than the release it follows: now() is the transaction's
    // start, so an acquire that waited on the row lock of a concurrent release began before that
    // release's released_at and would otherwise appear to overlap it by the wait. (No SQL
    // comments inside statements: the benchmark runs them through pgbench on one line.)
    LeaseAcquire: `${DURABLE_CLOCK('$5')}, ${EPOCH_CTE(s)}
      INSERT INTO ${s}.leases AS l (resource, holder, token, metadata, ttl_ms, created_at, acquired_at, expires_at)
      SELECT $1, $2, ${FIRST_TERM}, $4::jsonb, $3::integer, clock.now, clock.now, clock.now + $3::integer * interval '1 millisecond'
      FROM clock, epoch
      WHERE ${QUARANTINE_GATE(s, grantsNewTerm('$1', '$2'))}
      ${acquireConflict}`,

    // $1 resource, $2 holder, $3 token (nullable), $4 ttl_ms, $5 now
    LeaseRenew: `${CLOCK('$5')}
      UPDATE ${s}.leases AS l SET ${renewSet('$4::integer')}
      FROM clock
      WHERE l.resource = $1 AND ${ownedLive('$2', '$3::bigint')}
      ${returning}`,

    // $1 resource, $2 holder, $3 token (nullable), $4 now
    LeaseRelease: `${CLOCK('$4')}
      UPDATE ${s}.leases AS l SET ${RELEASE_SET}
      FROM clock
      WHERE l.resource = $1 AND ${ownedLive('$2', '$3::bigint')}
      ${returning}`,

    // The many-lease statements: one row of parameters per lease, as parallel arrays, with
    // distinct resources (postgres-leases.ts splits repeats into rounds and sorts each round by
    // resource, so two batches lock their rows in the same order). Same guards as above.
    // $1 resources, $2 holders, $3 ttl_ms, $4 metadata (JSON text, nullable), $5 now
    LeaseAcquireMany: `${DURABLE_CLOCK('$5')}, ${EPOCH_CTE(s)}
      INSERT INTO ${s}.leases AS l (resource, holder, token, metadata, ttl_ms, created_at, acquired_at, expires_at)
      SELECT r.resource, r.holder, ${FIRST_TERM}, r.metadata::jsonb, r.ttl_ms, clock.now, clock.now, clock.now + r.ttl_ms * interval '1 millisecond'
      FROM clock, epoch, unnest($1::text[], $2::text[], $3::integer[], $4::text[]) WITH ORDINALITY AS r(resource, holder, ttl_ms, metadata, i)
      WHERE ${QUARANTINE_GATE(s, grantsNewTerm('r.resource', 'r.holder'))}
      ORDER BY r.i
      ${acquireConflict}`,

    // $1 resources, $2 holders, $3 tokens (elements nullable), $4 ttl_ms, $5 now
    LeaseRenewMany: `${CLOCK('$5')}
      UPDATE ${s}.leases AS l SET ${renewSet('r.ttl_ms')}
      FROM clock, unnest($1::text[], $2::text[], $3::bigint[], $4::integer[]) AS r(resource, holder, token, ttl_ms)
      WHERE l.resource = r.resource AND ${ownedLive('r.holder', 'r.token')}
      ${returning}`,

    // $1 resources, $2 holders, $3 tokens (elements nullable), $4 now
    LeaseReleaseMany: `${CLOCK('$4')}
      UPDATE ${s}.leases AS l SET ${RELEASE_SET}
      FROM clock, unnest($1::text[], $2::text[], $3::bigint[]) AS r(resource, holder, token)
      WHERE l.resource = r.resource AND ${ownedLive('r.holder', 'r.token')}
      ${returning}`,

    // $1 id, $2 holder (nullable: administrator), $3 token (nullable), $4 now
    LeaseReleaseById: `${CLOCK('$4')}
      UPDATE ${s}.leases AS l SET ${RELEASE_SET}
      FROM clock
      WHERE l.id = $1 AND ($2::text IS NULL OR l.holder = $2::text) AND ($3::bigint IS NULL OR l.token = $3::bigint)
        AND l.released_at IS NULL AND l.expires_at > clock.now
      ${returning}`,

    // $1 resource, $2 now
    LeaseGet: `${CLOCK('$2')}
      SELECT ${LEASE_COLUMNS}, clock.now AS db_now, ${STATE('clock.now')} FROM ${s}.leases l, clock WHERE l.resource = $1`,

    // $1 id, $2 now
    LeaseGetById: `${CLOCK('$2')}
      SELECT ${LEASE_COLUMNS}, clock.now AS db_now, ${STATE('clock.now')} FROM ${s}.leases l, clock WHERE l.id = $1`,

    // $1 limit, $2 offset, $3 resource prefix (nullable), $4 now
    LeaseList: list,

    // $1 now
    LeaseCountActive: `${CLOCK('$1')}
      SELECT count(*) AS active FROM ${s}.leases l, clock WHERE l.released_at IS NULL AND l.expires_at > clock.now`,
  };
}
