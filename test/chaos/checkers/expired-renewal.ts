/**
 * Checker 2b: a term is renewed (or released) only while it is live. A renewal the database
 * applied after the term's confirmed expiry revived a term that was already free for anyone to
 * take: the holder's view of one continuous term is false. While renew is guarded by the token
 * no successor can be overlapped this way, which is why it needs a checker of its own.
 * Compared with `>`: the database keeps microseconds and a Date only milliseconds, so a legal
 * renewal a few microseconds before the expiry can read as the same millisecond.
 */
import type { History, Violation } from '../history.js';
import { leaseTerms } from './terms.js';

export function checkExpiredRenewal(history: History): Violation[] {
  const violations: Violation[] = [];
  for (const term of leaseTerms(history.events)) {
    let expiresAt: number | undefined;
    for (const c of term.confirmations) {
      if (expiresAt !== undefined && c.op !== 'acquire' && c.dbAt > expiresAt) {
        violations.push({
          kind: 'expired-renewal',
          message: `${term.family}:${term.resource}: ${c.op} by ${term.holder} (token ${term.token}) accepted ${Math.round(c.dbAt - expiresAt)} ms after the term expired`,
          evidence: {
            term: { holder: term.holder, token: term.token },
            expiresAt,
            confirmation: c,
          },
        });
      }
      expiresAt = Math.max(expiresAt ?? -Infinity, c.dbExpiresAt);
    }
  }
  return violations;
}
