/**
 * Every SQL statement of the lock family, named EntityVerb. Parameters are always bound; the
 * quoted schema is the only spliced text. Time-sensitive statements read
 * `coalesce($now, now())`, so the database clock decides unless a test pins it. Statements that
 * hand out a token commit durably (DURABLE_CLOCK: a token is never visible before it is durable).
 */
import { DURABLE_CLOCK, DURABLE_COMMIT } from './durable-commit.js';
import { EPOCH_CTE, FIRST_TERM, NEXT_TERM, QUARANTINE_GATE } from './epoch-sql.js';

/** Lease-lock rows in the shape of lease rows, so the lease row mapping serves both. */
const LEASE_LOCK_COLUMNS =
  'l.id, l.name AS resource, l.holder, l.token, NULL::jsonb AS metadata, l.ttl_ms, l.renew_count, l.created_at, l.acquired_at, l.renewed_at, l.released_at, l.expires_at';

const SLOT_COLUMNS = 'name, slot, holder, token, claimed_at, next_slot';

const CLOCK = (param: string): string =>
  `WITH clock AS (SELECT coalesce(${param}::timestamptz, now()) AS now)`;

const MS = "* interval '1 millisecond'";

/**
 * When a term stops blocking others: a released term at its end plus the quiet period; an
 * expired one (its holder failed) at its expiry plus the longer of quiet period and lock delay.
 */
const FREE_AT = `(CASE WHEN l.released_at IS NULL
    THEN l.expires_at + greatest(l.quiet_ms, l.delay_ms) ${MS}
    ELSE l.expires_at + l.quiet_ms ${MS} END)`;

export interface LockQueries {
  AdvisoryTryLock: string;
  AdvisoryLock: string;
  AdvisoryUnlock: string;
  LockWaitCancel: string;
  SessionLockEnsure: string;
  SessionLockTryAcquire: string;
  SessionLockAcquire: string;
  SessionLockToken: string;
  LeaseLockAcquire: string;
  LeaseLockRenew: string;
  LeaseLockRelease: string;
  LeaseLockGet: string;
  LeaseLockList: string;
  ScheduleSlotClaim: string;
  ScheduleSlotList: string;
  ScheduleSlotPrune: string;
  ScheduleList: string;
  FenceCheck: string;
  FenceGet: string;
}

export function lockQueries(s: string): LockQueries {
  // The live holder re-acquiring its own term: extend it and keep the token (a retried acquire
  // whose answer was lost must not lock out its own sender).
  const liveSameHolder =
    'l.holder = excluded.holder AND l.released_at IS NULL AND l.expires_at > excluded.acquired_at';
  return {
    // Advisory keys are database-wide; $1 is `<schema>:<name>`, so installations in different
    // schemas of one database never contend.
    AdvisoryTryLock: 'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked',
    AdvisoryLock: 'SELECT pg_advisory_lock(hashtextextended($1, 0))',
    AdvisoryUnlock: 'SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS unlocked',

    // $1 backend pid of a connection waiting in a lock queue
    LockWaitCancel: 'SELECT pg_cancel_backend($1)',

    // Outside the holding transaction: the row must be visible to (and lockable by) everyone.
    SessionLockEnsure: `INSERT INTO ${s}.session_locks (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`,
    SessionLockTryAcquire: `SELECT name FROM ${s}.session_locks WHERE name = $1 FOR UPDATE NOWAIT`,
    SessionLockAcquire: `SELECT name FROM ${s}.session_locks WHERE name = $1 FOR UPDATE`,
    // $1 name. Drawn after the row lock is held, on the pool, in a transaction of its own that
    // commits durably before the holder sees the token: the holding transaction ends with
    // ROLLBACK, and a sequence's WAL is flushed only by a commit (decision 0217).
    // The token is the sequence's value above the epoch's floor (decision 0225), and no term
    // is granted during a failover quarantine.
    SessionLockToken: `WITH durable AS (SELECT ${DURABLE_COMMIT} AS commit_mode),
      clock AS (SELECT now() AS now), ${EPOCH_CTE(s)}
      INSERT INTO ${s}.session_lock_terms AS t (name, token, granted_at)
      SELECT $1, epoch.token_floor + nextval('${s}.session_lock_tokens'), now() FROM durable, clock, epoch
      WHERE ${QUARANTINE_GATE(s, 'true')}
      ON CONFLICT (name) DO UPDATE SET token = excluded.token, granted_at = excluded.granted_at
      RETURNING t.token`,

    // $1 name, $2 holder, $3 ttl_ms, $4 quiet_ms, $5 delay_ms, $6 now
    LeaseLockAcquire: `${DURABLE_CLOCK('$6')}, ${EPOCH_CTE(s)}
      INSERT INTO ${s}.lease_locks AS l (name, holder, token, ttl_ms, quiet_ms, delay_ms, created_at, acquired_at, expires_at)
      SELECT $1, $2, ${FIRST_TERM}, $3::integer, $4::integer, $5::integer, clock.now, clock.now, clock.now + $3::integer ${MS}
      FROM clock, epoch
      WHERE ${QUARANTINE_GATE(
        s,
        `NOT EXISTS (SELECT 1 FROM ${s}.lease_locks h WHERE h.name = $1 AND h.holder = $2
           AND h.released_at IS NULL AND h.expires_at > clock.now)`,
      )}
      ON CONFLICT (name) DO UPDATE SET
        token       = CASE WHEN ${liveSameHolder} THEN l.token ELSE ${NEXT_TERM('l.token')} END,
        acquired_at = CASE WHEN ${liveSameHolder} THEN l.acquired_at ELSE excluded.acquired_at END,
        renewed_at  = CASE WHEN ${liveSameHolder} THEN excluded.acquired_at ELSE NULL END,
        renew_count = CASE WHEN ${liveSameHolder} THEN l.renew_count + 1 ELSE 0 END,
        holder      = excluded.holder,
        ttl_ms      = excluded.ttl_ms,
        quiet_ms    = excluded.quiet_ms,
        delay_ms    = excluded.delay_ms,
        released_at = NULL,
        expires_at  = excluded.expires_at
      WHERE (${liveSameHolder})
        OR (${FREE_AT} <= excluded.acquired_at AND excluded.acquired_at >= (SELECT quarantine_until FROM epoch))
      RETURNING ${LEASE_LOCK_COLUMNS}, (SELECT now FROM clock) AS db_now`,

    // $1 name, $2 holder, $3 token, $4 ttl_ms, $5 now
    LeaseLockRenew: `${CLOCK('$5')}
      UPDATE ${s}.lease_locks AS l SET
        renewed_at = clock.now, renew_count = l.renew_count + 1, ttl_ms = $4::integer,
        expires_at = clock.now + $4::integer ${MS}
      FROM clock
      WHERE l.name = $1 AND l.holder = $2 AND l.token = $3::bigint
        AND l.released_at IS NULL AND l.expires_at > clock.now
      RETURNING ${LEASE_LOCK_COLUMNS}, clock.now AS db_now`,

    // $1 name, $2 holder, $3 token, $4 at_least_ms, $5 now, $6 notify channel.
    // The term ends now, or at acquired_at + at_least if that is later; waiters are told inline.
    LeaseLockRelease: `${CLOCK('$5')}
      UPDATE ${s}.lease_locks AS l SET
        released_at = clock.now,
        expires_at  = greatest(clock.now, l.acquired_at + $4::integer ${MS})
      FROM clock
      WHERE l.name = $1 AND l.holder = $2 AND l.token = $3::bigint
        AND l.released_at IS NULL AND l.expires_at > clock.now
      RETURNING ${LEASE_LOCK_COLUMNS}, clock.now AS db_now, pg_notify($6, 'locks|' || l.name) AS notified`,

    // $1 name, $2 now
    LeaseLockGet: `${CLOCK('$2')}
      SELECT ${LEASE_LOCK_COLUMNS}, clock.now AS db_now,
        greatest(0, ceil(extract(epoch FROM ${FREE_AT} - clock.now) * 1000))::float8 AS retry_after_ms
      FROM ${s}.lease_locks l, clock WHERE l.name = $1`,

    // $1 name prefix (nullable: every lock), $2 limit, $3 now. COLLATE "C": name order is code
    // point order, as in the memory engine, whatever the database's default collation.
    LeaseLockList: `${CLOCK('$3')}
      SELECT ${LEASE_LOCK_COLUMNS}, clock.now AS db_now,
        CASE WHEN l.released_at IS NOT NULL THEN 'released' WHEN l.expires_at > clock.now THEN 'active' ELSE 'expired' END AS state
      FROM ${s}.lease_locks l, clock
      WHERE $1::text IS NULL OR starts_with(l.name, $1::text)
      ORDER BY l.name COLLATE "C" LIMIT $2`,

    // $1 name, $2 slot, $3 holder, $4 token (nullable), $5 now, $6 next slot (nullable)
    // A slot is claimed once: during a failover quarantine (decision 0225) a slot whose claim a
    // lossy promotion may have dropped is not claimed again until the claimer's trust is over.
    ScheduleSlotClaim: `${DURABLE_CLOCK('$5')}, ${EPOCH_CTE(s)}
      INSERT INTO ${s}.schedule_slots (name, slot, holder, token, claimed_at, next_slot)
      SELECT $1, $2::timestamptz, $3, $4::bigint, clock.now, $6::timestamptz FROM clock, epoch
      WHERE $2::timestamptz <= clock.now AND ${QUARANTINE_GATE(s, 'true')}
      ON CONFLICT (name, slot) DO NOTHING
      RETURNING ${SLOT_COLUMNS}`,

    // $1 name, $2 limit
    ScheduleSlotList: `SELECT ${SLOT_COLUMNS} FROM ${s}.schedule_slots WHERE name = $1 ORDER BY slot DESC LIMIT $2`,

    // $1 name, $2 before
    ScheduleSlotPrune: `WITH gone AS (DELETE FROM ${s}.schedule_slots WHERE name = $1 AND slot < $2::timestamptz RETURNING 1)
      SELECT count(*)::integer AS pruned FROM gone`,

    // $1 limit. Per schedule: its slot count and newest slot, then that slot's row (a primary
    // key probe). The count reads every kept slot: 20 ms for a 1 s schedule's day of slots
    // (86,400 rows, measured on the test machine); the dashboard reads it once a second, and
    // only while someone watches. A stored run counter would make it constant (decision 0301).
    ScheduleList: `SELECT s.name, s.slot, s.holder, s.token, s.claimed_at, s.next_slot, c.runs
      FROM (SELECT name, max(slot) AS newest, count(*)::integer AS runs
            FROM ${s}.schedule_slots GROUP BY name ORDER BY name COLLATE "C" LIMIT $1) c
      JOIN ${s}.schedule_slots s ON s.name = c.name AND s.slot = c.newest
      ORDER BY s.name COLLATE "C"`,

    // $1 scope, $2 token, $3 now. On conflict the row is locked even when the WHERE refuses the
    // update, so inside a caller's transaction an older writer waits for a newer one to finish.
    FenceCheck: `${DURABLE_CLOCK('$3')}
      INSERT INTO ${s}.fences AS f (scope, token, updated_at)
      SELECT $1, $2::bigint, clock.now FROM clock
      ON CONFLICT (scope) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at
      WHERE f.token <= excluded.token
      RETURNING f.token`,

    // $1 scope
    FenceGet: `SELECT token FROM ${s}.fences WHERE scope = $1`,
  };
}
