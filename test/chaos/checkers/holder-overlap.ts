/**
 * Checker 2: no two terms of one resource overlap on the database clock. A term lasts from its
 * acquiredAt to its release or its last confirmed expiry; the database decided both, so this is
 * the ground truth of who held what, whatever each holder believed.
 */
import type { History, Violation } from '../history.js';
import { byResource, leaseTerms, termKey, type Term } from './terms.js';

export function checkHolderOverlap(history: History): Violation[] {
  const violations: Violation[] = [];
  const terms = leaseTerms(history.events, history.bounds.dbClockOffsetMs);
  const groups = byResource(terms, (t) => `${t.family}:${t.resource}`);
  for (const [resource, terms] of groups) {
    // Sweep in start order, remembering the open term that surely ends last.
    let latest: Term | undefined;
    for (const term of terms) {
      if (latest && termKey(latest) !== termKey(term) && term.dbStart < latest.earliestEnd) {
        violations.push({
          kind: 'overlap',
          message: `${resource}: ${term.holder} (token ${term.token}) began ${Math.round(latest.earliestEnd - term.dbStart)} ms before the term of ${latest.holder} (token ${latest.token}) ended`,
          evidence: { earlier: latest, later: term },
        });
      }
      if (!latest || term.earliestEnd > latest.earliestEnd) latest = term;
    }
  }
  return violations;
}
