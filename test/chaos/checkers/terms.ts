/**
 * Terms of ownership rebuilt from the children's recorded engine operations. A term is one
 * (resource, holder, token): started by an acquire, extended by renewals (and by the holder's own
 * re-acquire of a live term, which keeps the token), ended by a release or by its last expiry.
 * Only confirmed operations count: an acquire whose answer never arrived (the process was killed)
 * is unknown to the history, which can hide a violation but never invent one.
 */
import type { ChildEvent, LeaseOpEvent } from '../history.js';

export interface Confirmation {
  op: LeaseOpEvent['op'];
  /** Database time at which the statement decided. */
  dbAt: number;
  dbExpiresAt: number;
}

export interface Term {
  family: LeaseOpEvent['family'];
  resource: string;
  holder: string;
  token: number;
  proc: string;
  /** Database time at which the term began. */
  dbStart: number;
  /** Database time at which the term ended: its release, or its last confirmed expiry. */
  dbEnd: number;
  /**
   * The earliest the term may have ended: dbEnd, or sooner when a release of it failed in flight
   * (its answer lost to a reset or a kill): that release may have committed at any time after
   * it was sent. An overlap is only proven against this end.
   */
  earliestEnd: number;
  released: boolean;
  confirmations: Confirmation[];
}

export const termKey = (t: Pick<Term, 'family' | 'resource' | 'holder' | 'token'>): string =>
  `${t.family}|${t.resource}|${t.holder}|${t.token}`;

/**
 * Wall time of a send, on the database clock, minus a slack for the estimate of the offset
 * (the processes and PostgreSQL share one machine's clock; the offset is measured once).
 */
const UNKNOWN_RELEASE_SLACK_MS = 50;

export function leaseTerms(events: readonly ChildEvent[], dbClockOffsetMs = 0): Term[] {
  const terms = new Map<string, Term>();
  const ops = events.filter(
    (e): e is ChildEvent & LeaseOpEvent =>
      e.type === 'lease-op' && e.ok && e.token !== undefined && e.dbAt !== undefined,
  );
  for (const e of ops) {
    const key = termKey({
      family: e.family,
      resource: e.resource,
      holder: e.holder,
      token: e.token!,
    });
    let term = terms.get(key);
    if (!term) {
      // A renew or release of a term whose acquire is not in the history (its answer was lost):
      // the term still existed, from at most this instant.
      term = {
        family: e.family,
        resource: e.resource,
        holder: e.holder,
        token: e.token!,
        proc: e.proc,
        dbStart: e.dbAcquiredAt ?? e.dbAt!,
        dbEnd: e.dbExpiresAt ?? e.dbAt!,
        earliestEnd: Number.POSITIVE_INFINITY,
        released: false,
        confirmations: [],
      };
      terms.set(key, term);
    }
    if (e.dbAcquiredAt !== undefined) term.dbStart = Math.min(term.dbStart, e.dbAcquiredAt);
    term.confirmations.push({ op: e.op, dbAt: e.dbAt!, dbExpiresAt: e.dbExpiresAt ?? e.dbAt! });
  }
  for (const term of terms.values()) {
    term.confirmations.sort((a, b) => a.dbAt - b.dbAt);
    const release = term.confirmations.find((c) => c.op === 'release');
    term.released = release !== undefined;
    term.dbEnd = release ? release.dbAt : Math.max(...term.confirmations.map((c) => c.dbExpiresAt));
    term.earliestEnd = Math.min(term.earliestEnd, term.dbEnd);
  }
  for (const e of events) {
    if (e.type !== 'lease-op' || e.op !== 'release' || e.ok || e.requestedToken === undefined)
      continue;
    const key = termKey({ ...e, token: e.requestedToken });
    const term = terms.get(key);
    // A confirmed release says exactly when the term ended; otherwise this one may have.
    if (!term || term.released) continue;
    const sentAt = e.invokedAt + dbClockOffsetMs - UNKNOWN_RELEASE_SLACK_MS;
    term.earliestEnd = Math.min(term.earliestEnd, Math.max(term.dbStart, sentAt));
  }
  return [...terms.values()].sort((a, b) => a.dbStart - b.dbStart || a.token - b.token);
}

/** Terms grouped by `family|resource`. */
export function byResource<T extends { resource: string }>(
  items: readonly T[],
  keyOf: (item: T) => string = (item) => item.resource,
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    // Push, not spread: a long run has tens of thousands of terms per resource.
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
