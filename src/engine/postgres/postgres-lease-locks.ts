/**
 * The lease-lock family on PostgreSQL: one pooled statement each from lock-queries. An acquire
 * that is refused reads the term in the way, for `current` and `retryAfterMs`.
 */
import type { Lease } from '../../core/types.js';
import type {
  LeaseLockAcquireParams,
  LeaseLockAcquireResult,
  LeaseLockOperations,
  LeaseLockReleaseParams,
  LeaseLockRenewParams,
} from '../lease-locks.js';
import type { PgContext } from './context.js';
import { withEpoch } from './epoch.js';
import type { LockQueries } from './lock-queries.js';
import { mapLease, type LeaseRow } from './rows.js';
import { PostgresTermHistory } from './postgres-term-history.js';

export class PostgresLeaseLocks implements LeaseLockOperations {
  private readonly terms: PostgresTermHistory;

  constructor(
    private readonly ctx: PgContext,
    private readonly sql: LockQueries,
  ) {
    this.terms = new PostgresTermHistory(ctx);
  }

  async leaseLockAcquire(p: LeaseLockAcquireParams): Promise<LeaseLockAcquireResult> {
    const rows = await withEpoch(this.ctx, 'LeaseLockAcquire', () =>
      this.ctx.query<LeaseRow>('LeaseLockAcquire', this.sql.LeaseLockAcquire, [
        p.name,
        p.holder,
        p.ttlMs,
        p.quietMs ?? 0,
        p.delayMs ?? 0,
        this.ctx.pinnedNow(),
      ]),
    );
    if (rows[0]) return { acquired: true, lease: mapLease(rows[0]) };
    const [current] = await this.ctx.query<LeaseRow & { retry_after_ms: number }>(
      'LeaseLockGet',
      this.sql.LeaseLockGet,
      [p.name, this.ctx.pinnedNow()],
    );
    return {
      acquired: false,
      current: current ? mapLease(current) : null,
      retryAfterMs: current?.retry_after_ms ?? 0,
    };
  }

  async leaseLockRenew(p: LeaseLockRenewParams): Promise<Lease | null> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockRenew', this.sql.LeaseLockRenew, [
      p.name,
      p.holder,
      p.token,
      p.ttlMs,
      this.ctx.pinnedNow(),
    ]);
    if (rows[0]) return mapLease(rows[0]);
    await this.terms.supersede('lock', [{ resource: p.name, holder: p.holder, token: p.token }]);
    return null;
  }

  async leaseLockRelease(p: LeaseLockReleaseParams): Promise<Lease | null> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockRelease', this.sql.LeaseLockRelease, [
      p.name,
      p.holder,
      p.token,
      p.atLeastMs ?? 0,
      this.ctx.pinnedNow(),
      this.ctx.notifyChannel,
    ]);
    return rows[0] ? mapLease(rows[0]) : null;
  }

  async leaseLockGet(p: { name: string }): Promise<Lease | null> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockGet', this.sql.LeaseLockGet, [
      p.name,
      this.ctx.pinnedNow(),
    ]);
    return rows[0] ? mapLease(rows[0]) : null;
  }

  async leaseLockList(p: { prefix?: string; limit: number }): Promise<Lease[]> {
    const rows = await this.ctx.query<LeaseRow>('LeaseLockList', this.sql.LeaseLockList, [
      p.prefix ?? null,
      p.limit,
      this.ctx.pinnedNow(),
    ]);
    return rows.map(mapLease);
  }
}
