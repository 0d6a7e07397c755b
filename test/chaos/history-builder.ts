/** Hand-made histories for the checkers' unit tests: an empty run, and events stamped in order. */
import type { ChildEvent, ChildEventBody, DbFacts, FaultRecord, History } from './history.js';

export function emptyFacts(): DbFacts {
  return {
    jobs: [],
    effects: [],
    counters: [],
    ledger: [],
    scheduleRuns: [],
    storedTokens: [],
    leakedConnections: [],
    leakedAdvisoryLocks: 0,
    leakedProcesses: [],
  };
}

export function historyOf(
  events: (ChildEventBody & { proc?: string; t?: number; incarnation?: number })[],
  extra: { facts?: Partial<DbFacts>; faults?: FaultRecord[] } = {},
): History {
  return {
    seed: 1,
    variant: 'real',
    durationMs: 1_000,
    events: events.map(
      (e, i) => ({ proc: 'p1', incarnation: 0, pid: 1, t: i, ...e }) as ChildEvent,
    ),
    faults: extra.faults ?? [],
    facts: { ...emptyFacts(), ...extra.facts },
    bounds: {
      electionName: 'e',
      electionTtlMs: 1_500,
      electionPollMs: 300,
      takeoverSlackMs: 1_000,
      dbClockOffsetMs: 0,
    },
    crashes: [],
  };
}

/** A confirmed lease operation on the database clock. */
export function leaseOp(
  op: 'acquire' | 'renew' | 'release',
  holder: string,
  token: number,
  dbAt: number,
  dbExpiresAt: number,
  more: { resource?: string; family?: 'lease' | 'lock'; proc?: string } = {},
): ChildEventBody & { proc?: string } {
  return {
    type: 'lease-op',
    family: more.family ?? 'lease',
    op,
    resource: more.resource ?? 'r',
    holder,
    invokedAt: dbAt,
    ok: true,
    token,
    dbAt,
    ...(op === 'acquire' ? { dbAcquiredAt: dbAt } : {}),
    dbExpiresAt,
    ...(more.proc ? { proc: more.proc } : {}),
  };
}
