/**
 * Checker 3: the fenced counter loses no update and doubles none. Every increment writes a ledger
 * row (opId, token, a commit-order sequence) in the transaction that bumps the counter, so:
 * the counter equals its ledger rows; an increment its holder saw commit is in the ledger once;
 * one its holder saw fail is absent; and in commit order the tokens never go back (a write
 * under a superseded token got past the fence).
 */
import type { ChildEvent, History, IncrementEvent, Violation } from '../history.js';

export function checkFencedCounter(history: History): Violation[] {
  const violations: Violation[] = [];
  const { counters, ledger } = history.facts;
  const rows = new Map<string, number>();
  for (const row of ledger) rows.set(row.opId, (rows.get(row.opId) ?? 0) + 1);
  for (const counter of counters) {
    const entries = ledger.filter((l) => l.scope === counter.scope);
    if (counter.value !== entries.length) {
      violations.push({
        kind: 'counter',
        message: `${counter.scope}: counter is ${counter.value} but ${entries.length} increments committed (${counter.value < entries.length ? 'lost' : 'doubled'} update)`,
      });
    }
    let highest: (typeof entries)[number] | undefined;
    for (const entry of [...entries].sort((a, b) => a.seq - b.seq)) {
      if (highest && entry.token < highest.token) {
        violations.push({
          kind: 'counter',
          message: `${counter.scope}: increment ${entry.opId} with token ${entry.token} committed after token ${highest.token}`,
          evidence: { stale: entry, newer: highest },
        });
      }
      if (!highest || entry.token > highest.token) highest = entry;
    }
  }
  for (const [opId, count] of rows) {
    if (count > 1)
      violations.push({ kind: 'counter', message: `increment ${opId} committed ${count} times` });
  }
  const outcomes = history.events.filter(
    (e): e is ChildEvent & IncrementEvent => e.type === 'increment' && e.phase !== 'invoke',
  );
  for (const e of outcomes) {
    const committed = rows.get(e.opId) ?? 0;
    if (e.phase === 'ok' && committed === 0)
      violations.push({
        kind: 'counter',
        message: `increment ${e.opId} was acknowledged but is not in the ledger (lost)`,
        evidence: e,
        ackedAt: e.t,
      });
    if (e.phase === 'fail' && committed > 0)
      violations.push({
        kind: 'counter',
        message: `increment ${e.opId} failed (${e.error}) but committed anyway`,
        evidence: e,
      });
  }
  return violations;
}
