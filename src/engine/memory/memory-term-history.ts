/**
 * The term history in process, with the rules of migration 19's trigger and the statements of
 * lease-term-queries: a term is recorded when the acquire that follows it bumps the token; a
 * renew refused after another holder's term followed the renewer's expired one marks it
 * `superseded`; pruning drops terms ended before a cutoff and all but the newest per resource.
 * The lease and lease-lock families share one history, told apart by kind (decision 0267).
 * Lease terms are recorded only once turned on, as on PostgreSQL.
 */
import type { RecordedTerm, TermKind } from '../../core/lease-terms.js';
import type { FencingToken } from '../../core/types.js';
import type { LeaseTermListParams, LeaseTermPruneParams } from '../leases.js';

/** What the trigger reads of the row it replaces. */
export interface EndingTerm {
  readonly holder: string;
  readonly token: FencingToken;
  readonly acquiredAt: Date;
  readonly releasedAt: Date | null;
  readonly expiresAt: Date;
}

export class MemoryTermHistory {
  /** Newest first, per `kind:resource`. */
  private readonly terms = new Map<string, RecordedTerm[]>();
  /** Lease terms are recorded once turned on (the trigger starts disabled); lock terms always. */
  recordingLeases = false;

  /** The acquire that started a new term over `previous`. */
  record(kind: TermKind, resource: string, previous: EndingTerm): void {
    if (kind === 'lease' && !this.recordingLeases) return;
    const released = previous.releasedAt !== null;
    const term: RecordedTerm = {
      holder: previous.holder,
      token: previous.token,
      startedAt: previous.acquiredAt,
      endedAt:
        previous.releasedAt !== null && previous.releasedAt < previous.expiresAt
          ? previous.releasedAt
          : previous.expiresAt,
      ended: released ? 'released' : 'expired',
    };
    const key = keyOf(kind, resource);
    this.terms.set(key, [term, ...(this.terms.get(key) ?? [])]);
  }

  /**
   * A renew by `holder` with `token` was refused; `current` is the row's term now. The renewer's
   * term is superseded if it expired and the term after it went to someone else.
   */
  supersede(
    kind: TermKind,
    resource: string,
    holder: string,
    token: FencingToken | undefined,
    current: { holder: string; token: FencingToken } | undefined,
  ): void {
    if (token === undefined) return;
    const terms = this.terms.get(keyOf(kind, resource)) ?? [];
    const i = terms.findIndex((t) => t.token === token);
    const term = terms[i];
    if (!term || term.holder !== holder || term.ended !== 'expired') return;
    // Newest first: the term after it is the one before it in the list, else the row.
    const next = i > 0 ? terms[i - 1] : current && current.token > token ? current : undefined;
    if (next && next.holder !== holder) terms[i] = { ...term, ended: 'superseded' };
  }

  list(p: LeaseTermListParams): RecordedTerm[] {
    return (this.terms.get(keyOf(p.kind, p.resource)) ?? []).slice(0, p.limit);
  }

  /** At most `limit` terms per call, as one statement's LIMIT; each resource's oldest first. */
  prune(p: LeaseTermPruneParams, now: Date): number {
    const cutoff = now.getTime() - p.olderThanMs;
    let pruned = 0;
    for (const [key, terms] of this.terms) {
      if (pruned >= p.limit) break;
      const doomed = terms
        .filter((t, i) => i >= p.keepPerResource || t.endedAt.getTime() < cutoff)
        .slice(-(p.limit - pruned));
      if (doomed.length === 0) continue;
      const gone = new Set(doomed);
      this.terms.set(
        key,
        terms.filter((t) => !gone.has(t)),
      );
      pruned += doomed.length;
    }
    return pruned;
  }
}

const keyOf = (kind: TermKind, resource: string): string => `${kind}:${resource}`;
