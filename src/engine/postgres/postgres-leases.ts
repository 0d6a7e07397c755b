import type { Lease } from '../../core/types.js';
import type {
  LeaseAcquireParams,
  LeaseAcquireResult,
  LeaseListParams,
  LeaseOperations,
  LeaseReleaseByIdParams,
  LeaseReleaseParams,
  LeaseRenewParams,
  LeaseTermListParams,
  LeaseTermPruneParams,
} from '../leases.js';
import type { RecordedTerm } from '../../core/lease-terms.js';
import type { PgContext } from './context.js';
import { leaseQueries, type LeaseQueries } from './lease-queries.js';
import { inRounds } from './lease-rounds.js';
import { mapLease, toSafeInteger, type LeaseRow } from './rows.js';
import { withEpoch } from './epoch.js';
import { PostgresTermHistory } from './postgres-term-history.js';

/**
 * The lease family on PostgreSQL: each operation is one statement from lease-queries (a
 * many-lease call: one per round of distinct resources).
 */
export class PostgresLeases implements LeaseOperations {
  private readonly sql: LeaseQueries;
  private readonly terms: PostgresTermHistory;

  constructor(private readonly ctx: PgContext) {
    this.sql = leaseQueries(ctx.quotedSchema);
    this.terms = new PostgresTermHistory(ctx);
  }

  async leaseAcquire(p: LeaseAcquireParams): Promise<LeaseAcquireResult> {
    const rows = await withEpoch(this.ctx, 'LeaseAcquire', () =>
      this.ctx.query<LeaseRow>('LeaseAcquire', this.sql.LeaseAcquire, [
        p.resource,
        p.holder,
        p.ttlMs,
        p.metadata == null ? null : JSON.stringify(p.metadata),
        this.ctx.pinnedNow(),
      ]),
    );
    if (rows[0]) return { acquired: true, lease: mapLease(rows[0]) };
    return { acquired: false, current: await this.leaseGet({ resource: p.resource }) };
  }

  async leaseRenew(p: LeaseRenewParams): Promise<Lease | null> {
    const lease = await this.oneLease('LeaseRenew', this.sql.LeaseRenew, [
      p.resource,
      p.holder,
      p.token ?? null,
      p.ttlMs,
      this.ctx.pinnedNow(),
    ]);
    if (!lease) await this.terms.supersede('lease', [p]);
    return lease;
  }

  leaseRelease(p: LeaseReleaseParams): Promise<Lease | null> {
    return this.oneLease('LeaseRelease', this.sql.LeaseRelease, [
      p.resource,
      p.holder,
      p.token ?? null,
      this.ctx.pinnedNow(),
    ]);
  }

  leaseAcquireMany(ps: readonly LeaseAcquireParams[]): Promise<LeaseAcquireResult[]> {
    return inRounds(ps, async (round) => {
      const leases = await withEpoch(this.ctx, 'LeaseAcquireMany', () =>
        this.byResource('LeaseAcquireMany', this.sql.LeaseAcquireMany, [
          round.map((p) => p.resource),
          round.map((p) => p.holder),
          round.map((p) => p.ttlMs),
          round.map((p) => (p.metadata == null ? null : JSON.stringify(p.metadata))),
          this.ctx.pinnedNow(),
        ]),
      );
      return Promise.all(
        round.map(async (p): Promise<LeaseAcquireResult> => {
          const lease = leases.get(p.resource);
          if (lease) return { acquired: true, lease };
          return { acquired: false, current: await this.leaseGet({ resource: p.resource }) };
        }),
      );
    });
  }

  async leaseRenewMany(ps: readonly LeaseRenewParams[]): Promise<(Lease | null)[]> {
    const leases = await this.ownedMany('LeaseRenewMany', this.sql.LeaseRenewMany, ps, (round) => [
      round.map((p) => p.ttlMs),
    ]);
    // One statement for every refusal: a resource named twice is marked once, which is the same.
    await this.terms.supersede(
      'lease',
      ps.filter((_, i) => leases[i] === null),
    );
    return leases;
  }

  leaseReleaseMany(ps: readonly LeaseReleaseParams[]): Promise<(Lease | null)[]> {
    return this.ownedMany('LeaseReleaseMany', this.sql.LeaseReleaseMany, ps, () => []);
  }

  leaseReleaseById(p: LeaseReleaseByIdParams): Promise<Lease | null> {
    return this.oneLease('LeaseReleaseById', this.sql.LeaseReleaseById, [
      p.id,
      p.holder ?? null,
      p.token ?? null,
      this.ctx.pinnedNow(),
    ]);
  }

  leaseGet(p: { resource: string }): Promise<Lease | null> {
    return this.oneLease('LeaseGet', this.sql.LeaseGet, [p.resource, this.ctx.pinnedNow()]);
  }

  leaseGetById(p: { id: number }): Promise<Lease | null> {
    return this.oneLease('LeaseGetById', this.sql.LeaseGetById, [p.id, this.ctx.pinnedNow()]);
  }

  async leaseList(p: LeaseListParams): Promise<Lease[]> {
    const rows = await this.ctx.query<LeaseRow>(
      `LeaseList_${p.filter}`,
      this.sql.LeaseList[p.filter],
      [p.limit, p.offset, p.resourcePrefix ?? null, this.ctx.pinnedNow()],
    );
    return rows.map(mapLease);
  }

  async leaseCountActive(): Promise<number> {
    const rows = await this.ctx.query<{ active: string }>(
      'LeaseCountActive',
      this.sql.LeaseCountActive,
      [this.ctx.pinnedNow()],
    );
    return toSafeInteger(rows[0]!.active, 'count(leases)');
  }

  leaseTermList(p: LeaseTermListParams): Promise<RecordedTerm[]> {
    return this.terms.list(p);
  }

  leaseTermPrune(p: LeaseTermPruneParams): Promise<number> {
    return this.terms.prune(p);
  }

  leaseTermRecording(): Promise<boolean> {
    return this.terms.recording();
  }

  leaseTermRecordingSet(p: { enabled: boolean }): Promise<void> {
    return this.terms.setRecording(p.enabled);
  }

  /**
   * A many-lease UPDATE guarded by holder and token: `$1` resources, `$2` holders, `$3` tokens,
   * then `more(round)`, then now. Each answer is the lease, or null when it was not theirs.
   */
  private ownedMany<P extends LeaseReleaseParams>(
    name: string,
    text: string,
    ps: readonly P[],
    more: (round: P[]) => unknown[],
  ): Promise<(Lease | null)[]> {
    return inRounds(ps, async (round) => {
      const leases = await this.byResource(name, text, [
        round.map((p) => p.resource),
        round.map((p) => p.holder),
        round.map((p) => p.token ?? null),
        ...more(round),
        this.ctx.pinnedNow(),
      ]);
      return round.map((p) => leases.get(p.resource) ?? null);
    });
  }

  /** The leases a many-lease statement returned, by resource (distinct within a round). */
  private async byResource(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<Map<string, Lease>> {
    const rows = await this.ctx.query<LeaseRow>(name, text, values);
    return new Map(rows.map((row) => [row.resource, mapLease(row)]));
  }

  private async oneLease(name: string, text: string, values: unknown[]): Promise<Lease | null> {
    const rows = await this.ctx.query<LeaseRow>(name, text, values);
    return rows[0] ? mapLease(rows[0]) : null;
  }
}
