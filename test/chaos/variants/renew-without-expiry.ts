/**
 * Broken variant (c), for the chaos harness only: lease renewal without its expiry check. The
 * real LeaseRenew extends a term only while `expires_at > now`; this one still checks holder and
 * token but revives a term that already expired, so a holder frozen past its ttl gets its renewal
 * accepted on resume as if its term had never lapsed.
 */
import type { Engine } from '../../../src/engine/engine.js';
import { LEASE_COLUMNS } from '../../../src/engine/postgres/lease-queries.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { mapLease, type LeaseRow } from '../../../src/engine/postgres/rows.js';
import { quoteSchema } from '../../../src/engine/postgres/sql-identifiers.js';

export class RenewWithoutExpiryEngine extends PostgresEngine {
  override leaseRenew: Engine['leaseRenew'] = async (p) => {
    const s = quoteSchema(this.schema);
    // Deliberately missing: AND l.expires_at > clock.now
    const text = `WITH clock AS (SELECT now() AS now)
      UPDATE ${s}.leases AS l SET
        renewed_at = clock.now, renew_count = l.renew_count + 1, ttl_ms = $4::integer,
        expires_at = clock.now + $4::integer * interval '1 millisecond'
      FROM clock
      WHERE l.resource = $1 AND l.holder = $2 AND ($3::bigint IS NULL OR l.token = $3::bigint)
        AND l.released_at IS NULL
      RETURNING ${LEASE_COLUMNS}, clock.now AS db_now, 'active' AS state`;
    const result = await this.pool.query<LeaseRow>({
      name: 'ChaosLeaseRenewWithoutExpiry',
      text,
      values: [p.resource, p.holder, p.token ?? null, p.ttlMs],
    });
    return result.rows[0] ? mapLease(result.rows[0]) : null;
  };
}
