/**
 * Checker 1: fencing tokens are never reused and strictly increase, per resource, in the order
 * the terms began. Lease and lease-lock terms are ordered on the database clock (their
 * acquiredAt); session-lock terms have no database time, so they are ordered by the wall time
 * at which their holder learnt of the grant, which can only lag the grant itself.
 */
import type { ChildEvent, History, SessionTermEvent, Violation } from '../history.js';
import { byResource, leaseTerms } from './terms.js';

interface Started {
  resource: string;
  holder: string;
  token: number;
  start: number;
}

export function checkTokenOrder(history: History): Violation[] {
  const lease: Started[] = leaseTerms(history.events).map((t) => ({
    resource: `${t.family}:${t.resource}`,
    holder: t.holder,
    token: t.token,
    start: t.dbStart,
  }));
  const session: Started[] = history.events
    .filter(
      (e): e is ChildEvent & SessionTermEvent => e.type === 'session-term' && e.phase === 'granted',
    )
    .map((e) => ({
      resource: `session:${e.resource}`,
      holder: e.holder,
      token: e.token,
      start: e.t,
    }));
  const violations: Violation[] = [];
  for (const [resource, terms] of byResource([...lease, ...session])) {
    terms.sort((a, b) => a.start - b.start);
    const seen = new Map<number, Started>();
    let previous: Started | undefined;
    for (const term of terms) {
      const twin = seen.get(term.token);
      if (twin && twin.holder !== term.holder) {
        violations.push({
          kind: 'token-order',
          message: `${resource}: token ${term.token} reused by ${term.holder} after ${twin.holder}`,
          evidence: { first: twin, second: term },
        });
      } else if (previous && term.token <= previous.token && !twin) {
        violations.push({
          kind: 'token-order',
          message: `${resource}: token ${term.token} of ${term.holder} began after token ${previous.token} of ${previous.holder}`,
          evidence: { previous, term },
        });
      }
      seen.set(term.token, term);
      previous = term;
    }
  }
  return violations;
}
