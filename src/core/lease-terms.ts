/**
 * The history of a lease's (or an election's) terms, as an operator reads it (decision 0267).
 * The engine records a term when the next one begins (the acquire that bumps the token); the
 * term still on the row, live or not, is the newest one. `termsTimeline` merges the two.
 */
import { InvalidArgumentError } from './errors.js';
import type { FencingToken, Lease } from './types.js';
import { requireSafeInteger } from './validate.js';

/** Which rows a history belongs to: `lease` rows (lh.leases) or `lock` rows (lease locks, elections). */
export type TermKind = 'lease' | 'lock';

/**
 * How a term ended:
 * - `released`: its holder released it (or an administrator did, by id);
 * - `expired`: it ran out without a renewal; the next term began after its expiry;
 * - `superseded`: it expired, the next term went to another holder, and its own holder came
 *   back afterwards to renew it with its token and was refused: a holder that was still
 *   working when it lost the lease (a pause, a partition), the case fencing tokens exist for.
 */
export type TermEnd = 'released' | 'expired' | 'superseded';
export const TERM_ENDS: readonly TermEnd[] = ['released', 'expired', 'superseded'];

/** A term that has been followed by another, as the engine recorded it. */
export interface RecordedTerm {
  readonly holder: string;
  readonly token: FencingToken;
  readonly startedAt: Date;
  /** When it was released, or when it ran out. */
  readonly endedAt: Date;
  readonly ended: TermEnd;
}

/** One term of a timeline, newest first. */
export interface LeaseTermView {
  readonly holder: string;
  readonly token: FencingToken;
  readonly startedAt: Date;
  /** Null while the term is still held. */
  readonly endedAt: Date | null;
  /** Null while the term is still held. */
  readonly ended: TermEnd | null;
  /** It began after the previous term ran out (expired or superseded) under another holder. */
  readonly takeover: boolean;
}

/** The default and largest number of terms one history call answers. */
export const TERMS_DEFAULT_LIMIT = 50;
export const TERMS_MAX_LIMIT = 200;

/** The options of a history call (`lh.leases.terms`, `lh.locks.leaseLockTerms`): its limit. */
export function termsLimit(options: { limit?: number } | undefined): number {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new InvalidArgumentError('options', 'must be an object { limit? }');
  const limit = requireSafeInteger('limit', options?.limit ?? TERMS_DEFAULT_LIMIT, 1);
  if (limit > TERMS_MAX_LIMIT)
    throw new InvalidArgumentError('limit', `must be at most ${TERMS_MAX_LIMIT}`);
  return limit;
}

/**
 * The timeline of a resource, newest first: its current row (`current`, the newest term, whether
 * held, released or expired) followed by the recorded terms (newest first, at most `limit` in
 * all). A term is a takeover when the term before it ran out under a different holder.
 */
export function termsTimeline(
  current: Lease | null,
  recorded: readonly RecordedTerm[],
  limit: number,
): LeaseTermView[] {
  const terms: Omit<LeaseTermView, 'takeover'>[] = [];
  if (current) terms.push(currentTerm(current));
  for (const term of recorded) if (!current || term.token < current.token) terms.push(term);
  terms.sort((a, b) => b.token - a.token);
  return terms.slice(0, limit).map((term, i) => {
    const before = terms[i + 1];
    const takeover =
      before !== undefined &&
      before.holder !== term.holder &&
      (before.ended === 'expired' || before.ended === 'superseded');
    return { ...term, takeover };
  });
}

function currentTerm(lease: Lease): Omit<LeaseTermView, 'takeover'> {
  const base = { holder: lease.holder, token: lease.token, startedAt: lease.acquiredAt };
  switch (lease.state) {
    case 'active':
      return { ...base, endedAt: null, ended: null };
    case 'released':
      return { ...base, endedAt: lease.releasedAt ?? lease.expiresAt, ended: 'released' };
    case 'expired':
      return { ...base, endedAt: lease.expiresAt, ended: 'expired' };
  }
}
