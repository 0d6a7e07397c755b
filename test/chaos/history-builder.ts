/** Hand-made histories for the checkers' unit tests: an empty run, and events stamped in order. */
import type {
  ChildEvent,
  ChildEventBody,
  DbFacts,
  FaultRecord,
  History,
  QueueLimits,
} from './history.js';

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
  extra: { facts?: Partial<DbFacts>; faults?: FaultRecord[]; limits?: QueueLimits[] } = {},
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
    ...(extra.limits ? { limits: extra.limits } : {}),
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

/** A job run granted by a claim (database clock), by worker `worker` of process `proc`. */
export function jobClaim(
  jobId: number,
  dbClaimedAt: number,
  dbLeaseExpiresAt: number,
  more: { queue?: string; generation?: number; worker?: string; key?: string } = {},
): ChildEventBody & { proc: string } {
  const worker = more.worker ?? `w${jobId}`;
  return {
    type: 'job-claim',
    queue: more.queue ?? 'q',
    jobId,
    generation: more.generation ?? 1,
    worker,
    partitionKey: more.key ?? null,
    dbClaimedAt,
    dbLeaseExpiresAt,
    proc: worker,
  };
}

/** A completion accepted, read on the database clock before its COMMIT. */
export function jobCompleted(jobId: number, dbAt: number, generation = 1): ChildEventBody {
  return { type: 'job', phase: 'complete-ok', jobId, generation, dbAt };
}
