/**
 * The term history on PostgreSQL (decision 0267): terms are recorded by migration 19's trigger
 * inside each acquire; this reads them, prunes them, and marks a term `superseded` when its
 * holder's renew is refused after another holder's term followed it. That mark is a statement
 * of its own on the refused path only (a renew that succeeds runs nothing extra).
 */
import { type RecordedTerm, type TermEnd, type TermKind } from '../../core/lease-terms.js';
import type { FencingToken } from '../../core/types.js';
import type { LeaseTermListParams, LeaseTermPruneParams } from '../leases.js';
import type { PgContext } from './context.js';
import {
  leaseTermQueries,
  type LeaseTermQueries,
  type RecordedTermRow,
} from './lease-term-queries.js';
import { toSafeInteger } from './rows.js';

/** A renew that was refused, with the token its holder still believed in. */
export interface RefusedRenew {
  resource: string;
  holder: string;
  token?: FencingToken | undefined;
}

export class PostgresTermHistory {
  private readonly sql: LeaseTermQueries;

  constructor(private readonly ctx: PgContext) {
    this.sql = leaseTermQueries(ctx.quotedSchema);
  }

  async list(p: LeaseTermListParams): Promise<RecordedTerm[]> {
    const rows = await this.ctx.query<RecordedTermRow>('LeaseTermList', this.sql.LeaseTermList, [
      p.kind,
      p.resource,
      p.limit,
    ]);
    return rows.map(mapTerm);
  }

  async prune(p: LeaseTermPruneParams): Promise<number> {
    if (p.limit <= 0) return 0;
    const rows = await this.ctx.query<{ pruned: number }>(
      'LeaseTermPrune',
      this.sql.LeaseTermPrune,
      [p.olderThanMs, p.keepPerResource, p.limit, this.ctx.pinnedNow()],
    );
    return rows[0]?.pruned ?? 0;
  }

  async recording(): Promise<boolean> {
    const rows = await this.ctx.query<{ enabled: boolean }>(
      'LeaseTermRecording',
      this.sql.LeaseTermRecording,
      [],
    );
    return rows[0]?.enabled ?? false;
  }

  /** ALTER TABLE: the table's owner (the role that migrates) may; it waits for running writes. */
  async setRecording(enabled: boolean): Promise<void> {
    if (enabled) await this.ctx.query('LeaseTermRecordingOn', this.sql.LeaseTermRecordingOn, []);
    else await this.ctx.query('LeaseTermRecordingOff', this.sql.LeaseTermRecordingOff, []);
  }

  /**
   * Marks the terms of refused renews superseded where another holder's term followed them.
   * Best effort: the refusal is the answer that matters, so a failure here (the database gone
   * in between, a standby) leaves the term `expired` rather than turning the refusal into an
   * error.
   */
  async supersede(kind: TermKind, refused: readonly RefusedRenew[]): Promise<void> {
    // A renew without a token (seed-000 HTTP clients) names no term.
    const named = refused.filter((r) => r.token !== undefined);
    if (named.length === 0) return;
    await this.ctx
      .query('LeaseTermSupersede', this.sql.LeaseTermSupersede, [
        named.map((r) => r.resource),
        named.map((r) => r.holder),
        named.map((r) => r.token),
        kind,
      ])
      .catch(() => undefined);
  }
}

function mapTerm(row: RecordedTermRow): RecordedTerm {
  return {
    holder: row.holder,
    token: toSafeInteger(row.token, 'lease_terms.token'),
    startedAt: row.started_at,
    endedAt: row.ended_at,
    // The table's CHECK constraint admits only the three ends.
    ended: row.ended as TermEnd,
  };
}
