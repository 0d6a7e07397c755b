import type { Lease, LeaseState } from '../../core/types.js';

/** A leases row as pg returns it (bigint columns arrive as strings). */
export interface LeaseRow {
  id: string;
  resource: string;
  holder: string;
  token: string;
  metadata: Record<string, unknown> | null;
  ttl_ms: number;
  renew_count: number;
  created_at: Date;
  acquired_at: Date;
  renewed_at: Date | null;
  released_at: Date | null;
  expires_at: Date;
  db_now: Date;
  /** Decided in SQL when the query selects it (the lease queries do); else derived from db_now. */
  state?: LeaseState;
}

export function leaseState(releasedAt: Date | null, expiresAt: Date, now: Date): LeaseState {
  if (releasedAt) return 'released';
  return expiresAt.getTime() > now.getTime() ? 'active' : 'expired';
}

export function toSafeInteger(value: string | number, column: string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n))
    throw new RangeError(`${column} ${value} exceeds the safe integer range`);
  return n;
}

/** Integers as a PostgreSQL array literal, `{1,2,3}`, for an `int[]` or `bigint[]` parameter. */
export function integerArray(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}

export function mapLease(row: LeaseRow): Lease {
  return {
    id: toSafeInteger(row.id, 'leases.id'),
    resource: row.resource,
    holder: row.holder,
    token: toSafeInteger(row.token, 'leases.token'),
    metadata: row.metadata,
    createdAt: row.created_at,
    acquiredAt: row.acquired_at,
    renewedAt: row.renewed_at,
    releasedAt: row.released_at,
    expiresAt: row.expires_at,
    renewCount: row.renew_count,
    ttlMs: row.ttl_ms,
    // Best decided in SQL: a Date keeps milliseconds, so comparing expires_at with db_now here
    // calls a lease expired up to a millisecond before the database does.
    state: row.state ?? leaseState(row.released_at, row.expires_at, row.db_now),
  };
}
