/**
 * The history of a chaos run: what every child process did (one JSON line per event on its
 * stdout, stamped by the child), what the harness did to them (faults), and the database facts
 * read once the run is over. Checkers are pure functions of this, so a saved history can be
 * checked again without a database.
 *
 * Two clocks, on purpose (docs/decisions/0401-chaos-harness.md):
 * - `t` (and every `...At` named *wall*) is the wall clock of this machine, read as
 *   `performance.timeOrigin + performance.now()`: every process runs on the same host, so one
 *   kernel clock orders the harness's faults and the children's invocations and completions.
 * - `db*` fields are the database's own `now()` as returned by the statement that decided
 *   (acquiredAt, renewedAt, expiresAt, releasedAt). Who held a lease when is decided by the
 *   database clock, so overlaps are judged on it and never on a process's view.
 */

/** One engine operation that decides ownership, as the child's recording engine saw it. */
export type LeaseOpKind = 'acquire' | 'renew' | 'release';

export interface LeaseOpEvent {
  type: 'lease-op';
  /** `lease` (lh.leases) or `lock` (lease locks and elections). */
  family: 'lease' | 'lock';
  op: LeaseOpKind;
  resource: string;
  holder: string;
  /** Invocation time (wall); the completion is the event's `t`. */
  invokedAt: number;
  ok: boolean;
  token?: number;
  /** Database time at which the statement decided (acquiredAt / renewedAt / releasedAt). */
  dbAt?: number;
  /** Database time at which the term began (the lease's acquiredAt), on acquire answers. */
  dbAcquiredAt?: number;
  /** The term's expiry after this operation, on the database clock. */
  dbExpiresAt?: number;
  /**
   * The token a release asked to end, on releases whose outcome is unknown: one that failed in
   * flight, and the record written just before a release is sent (`inFlight`), which is all
   * that remains of it when the process is killed before the answer comes.
   */
  requestedToken?: number;
  inFlight?: true;
  /**
   * Pairs the answer with its `lease-invoke` record (per process incarnation). Absent in
   * histories saved before the linearizability checker existed.
   */
  callId?: number;
  /**
   * Set when the call threw (its outcome is unknown: it may have committed), as opposed to a
   * refusal (busy, lost), which is `ok: false` without it. The error's code.
   */
  error?: string;
  /**
   * With `error`: the engine knows the statement took no effect (it was refused by the server,
   * which rolls it back, or never sent: pg-errors.ts `outcomeKnown`). Without it, a thrown call
   * may have committed.
   */
  noEffect?: true;
}

/**
 * A lease operation about to be sent (written synchronously before the call, so it survives a
 * SIGKILL that comes before the answer): what the linearizability checker needs to know of a
 * call whose answer never came. `requestedToken` on renew and release; `ttlMs` on acquire and
 * renew.
 */
export interface LeaseInvokeEvent {
  type: 'lease-invoke';
  family: 'lease' | 'lock';
  op: LeaseOpKind;
  resource: string;
  holder: string;
  callId: number;
  requestedToken?: number;
  ttlMs?: number;
}

/** A session-lock term granted (its token) or ended. */
export interface SessionTermEvent {
  type: 'session-term';
  resource: string;
  holder: string;
  token: number;
  phase: 'granted' | 'ended';
}

/** A trust deadline as the holder computed it (wall), after an acquire or a renewal. */
export interface TrustEvent {
  type: 'trust';
  resource: string;
  holder: string;
  token: number;
  trustedUntil: number;
  marginMs: number;
}

/** An abort signal fired: `reason` is the error code (`lease_lost`, `aborted`). */
export interface SignalEvent {
  type: 'signal';
  resource: string;
  holder: string;
  token: number;
  reason: string;
}

/** One fenced increment of a counter: invoked, then committed or refused. */
export interface IncrementEvent {
  type: 'increment';
  phase: 'invoke' | 'ok' | 'fail';
  scope: string;
  opId: string;
  token: number;
  error?: string;
}

/** A job's completion attempt by a worker, in the transaction that writes its effect. */
export interface JobEvent {
  type: 'job';
  phase: 'started' | 'complete-invoke' | 'complete-ok' | 'complete-refused';
  jobId: number;
  generation: number;
  /**
   * On `complete-ok`: the database clock (`clock_timestamp()`) read in the completing
   * transaction just after the completion statement, before its COMMIT. The job's slot is freed
   * at that COMMIT, so this is an instant the run surely still held it (absent in histories
   * saved before the limit-exceeded checker existed).
   */
  dbAt?: number;
}

/**
 * A job run granted by a claim, as the claim answered (recording engine): the database's
 * claimedAt and lease expiry, and what the queue's limits count it by.
 */
export interface JobClaimEvent {
  type: 'job-claim';
  queue: string;
  jobId: number;
  generation: number;
  worker: string;
  partitionKey: string | null;
  dbClaimedAt: number;
  dbLeaseExpiresAt: number;
}

/** A renewal the database granted a job run: its new lease expiry (database clock). */
export interface JobRenewEvent {
  type: 'job-renew';
  jobId: number;
  generation: number;
  dbLeaseExpiresAt: number;
}

/**
 * A job run's outcome about to be sent (complete, fail, hand-back), written before the call:
 * whatever the answer, the run cannot have ended before this instant (wall).
 */
export interface JobOutcomeInvokeEvent {
  type: 'job-outcome-invoke';
  op: 'complete' | 'fail' | 'hand-back';
  jobId: number;
  generation: number;
}

/** A schedule slot this process ran. */
export interface SlotEvent {
  type: 'slot';
  name: string;
  slot: number;
  token: number | null;
}

/**
 * Jobs the harness's producer was told were enqueued (the call returned their ids). Recorded by
 * the harness itself, as proc `producer`, so "acknowledged, then lost" can look for each one.
 */
export interface EnqueueAckEvent {
  type: 'enqueue-ack';
  jobIds: number[];
}

/**
 * A logical single enqueue of the producer role (coalesced path): invoked, answered with its
 * job, or failed. `part` is its partition key, `seq` its place in that partition's call order.
 */
export interface EnqueueEvent {
  type: 'enqueue';
  phase: 'invoke' | 'ok' | 'fail';
  opId: string;
  part: string;
  seq: number;
  jobId?: number;
  error?: string;
}

export interface ReadyEvent {
  type: 'ready';
}

export type ChildEventBody =
  | LeaseOpEvent
  | LeaseInvokeEvent
  | SessionTermEvent
  | TrustEvent
  | SignalEvent
  | IncrementEvent
  | JobEvent
  | JobClaimEvent
  | JobRenewEvent
  | JobOutcomeInvokeEvent
  | SlotEvent
  | EnqueueAckEvent
  | EnqueueEvent
  | ReadyEvent;

/** A child's event as the harness stores it: who, which incarnation, when (wall). */
export type ChildEvent = ChildEventBody & {
  proc: string;
  incarnation: number;
  pid: number;
  t: number;
};

export type FaultType =
  | 'sigkill'
  | 'sigstop'
  | 'stall'
  | 'terminate-backend'
  | 'proxy-blackhole'
  | 'proxy-latency'
  | 'proxy-reset'
  | 'pg-restart'
  | 'pg-crash'
  // Failover mode only (docs/decisions/0226): the HA cluster's primary killed and the standby
  // promoted, a planned switchover, and replication to the standby held back.
  | 'failover'
  | 'switchover'
  | 'standby-lag';

export const FAULT_TYPES: readonly FaultType[] = [
  'sigkill',
  'sigstop',
  'stall',
  'terminate-backend',
  'proxy-blackhole',
  'proxy-latency',
  'proxy-reset',
  'pg-restart',
  'pg-crash',
];

/**
 * The fault types of a failover run (`--failover sync|async`): the process and network faults
 * as before, and the HA cluster's own instead of pg-restart and pg-crash of the single server.
 */
export const FAILOVER_FAULT_TYPES: readonly FaultType[] = [
  ...FAULT_TYPES.filter((type) => type !== 'pg-restart' && type !== 'pg-crash'),
  'failover',
  'switchover',
  'standby-lag',
];

/** Replication of the HA cluster in a failover run. */
export type ReplicationMode = 'sync' | 'async';

/**
 * What a failover or switchover did (on the fault's record; a standby-lag that ended in a
 * failover carries one too): which member led before and after, the timeline reached, and how
 * long the cluster had no primary reachable through haproxy (from the kill, or the switchover's
 * request, to the first write accepted by the new primary).
 */
export interface PromotionRecord {
  kind: 'failover' | 'switchover';
  /**
   * When the harness began the failover (the kill follows once Patroni's REST API has named the
   * primary: milliseconds, more on a starved machine) or asked for the switchover (wall).
   */
  at: number;
  from: string;
  to: string;
  timeline: number;
  /** From `at` to the new primary accepting writes through haproxy. */
  unavailableMs: number;
  /** From `at` until the old primary was back as a streaming standby. */
  healthyAfterMs?: number;
  /** Replication was held back (standby-lag) when the primary was killed. */
  duringLag?: boolean;
  /** With `duringLag`: when the WAL senders were stopped (wall). */
  heldSince?: number;
}

/** A fault the harness injected, with the wall-clock window during which it was in force. */
export interface FaultRecord {
  type: FaultType;
  /** The target process, or null for the database itself (pg-restart). */
  target: string | null;
  startedAt: number;
  endedAt: number;
  /** Skipped (with the reason), e.g. a restart of a database the harness does not own. */
  skipped?: string;
  detail?: string;
  /** Failover, switchover, and a standby-lag that ended in a failover. */
  promotion?: PromotionRecord;
}

export interface JobFact {
  id: number;
  status: string;
  generation: number;
}

export interface EffectFact {
  jobId: number;
  generation: number;
  worker: string;
}

/** A row a workflow step wrote through its transaction (the workflow role, issue 28). */
export interface StepFact {
  jobId: number;
  step: string;
  /** The generation of the run that wrote it. */
  generation: number;
  /** The job's generation as the row's own statement saw it. */
  seenGeneration: number;
  /** For a flow parent's step: its children not completed when it ran; otherwise null. */
  unfinishedChildren: number | null;
}

export interface CounterFact {
  scope: string;
  value: number;
}

export interface LedgerFact {
  /** Commit order of the increments (a sequence drawn inside the increment's transaction). */
  seq: number;
  scope: string;
  opId: string;
  token: number;
}

/**
 * The newest token the database holds for a resource after the run: a lease's or lease lock's
 * row token (`family` lease / lock, resource as the children recorded it), or for `session` the
 * session-lock token sequence's last value (resource `*`: one sequence serves every name).
 */
export interface StoredTokenFact {
  family: 'lease' | 'lock' | 'session';
  resource: string;
  token: number;
}

export interface ScheduleRunFact {
  name: string;
  slot: number;
  proc: string;
}

/** A job the producer role created, as the database holds it (its payload names the call). */
export interface EnqueuedFact {
  id: number;
  opId: string;
  part: string;
  seq: number;
}

/** What the database and the OS said once the run was over. */
export interface DbFacts {
  jobs: JobFact[];
  effects: EffectFact[];
  counters: CounterFact[];
  ledger: LedgerFact[];
  scheduleRuns: ScheduleRunFact[];
  storedTokens: StoredTokenFact[];
  /** Server sessions still open from the children (through the proxy) after they all stopped. */
  leakedConnections: { pid: number; application: string; state: string }[];
  /** Advisory locks still held in the chaos database after the children stopped. */
  leakedAdvisoryLocks: number;
  /** Children the harness started that were still alive after it stopped them. */
  leakedProcesses: { proc: string; pid: number }[];
  /** The producer role's jobs, in id order (absent in histories saved before it existed). */
  enqueued?: EnqueuedFact[];
  /** The workflow role's step rows and jobs (absent in runs without that role). */
  steps?: StepFact[];
  workflowJobs?: JobFact[];
}

/** Timing the checkers judge against: the run's configuration, not guesses. */
export interface RunBounds {
  electionName: string;
  electionTtlMs: number;
  electionPollMs: number;
  /** Extra time allowed on a loaded machine before a slow takeover is a violation. */
  takeoverSlackMs: number;
  /** Database clock minus wall clock, measured at the start of the run. */
  dbClockOffsetMs: number;
}

/**
 * A queue the run configured with flow control (`lh.queue(name).configure`), as configured: what
 * the limit-exceeded checker judges the queue's job runs against. `rate.per` in ms.
 */
export interface QueueLimits {
  queue: string;
  concurrency: number | null;
  perKeyConcurrency: number | null;
  rate: { limit: number; per: number } | null;
}

export interface History {
  seed: number;
  variant: string;
  durationMs: number;
  events: ChildEvent[];
  faults: FaultRecord[];
  facts: DbFacts;
  bounds: RunBounds;
  /** Children that died on their own (not killed by a fault) and were restarted. */
  crashes: { proc: string; incarnation: number; stderr: string[] }[];
  /** Set in a failover run: the replication mode of the HA cluster (absent: one server). */
  replication?: ReplicationMode;
  /** The limited queues of the run (absent in histories saved before they existed). */
  limits?: QueueLimits[];
}

export interface Violation {
  kind: ViolationKind;
  message: string;
  /** The events or facts that show it (kept small: enough to find them in the saved history). */
  evidence?: unknown;
  /**
   * Set when the violation is an acknowledgement the database no longer shows (or its direct
   * consequence, the thing then done again): the wall time the caller was answered. In an
   * asynchronous failover run such a violation that fell before a failover is a loss the
   * replication mode allows, counted and explained rather than a violation
   * (checkers/failover-losses.ts).
   */
  ackedAt?: number;
}

/** An acknowledgement lost to an asynchronous failover: a fact of the run, not a violation. */
export interface ExplainedLoss {
  violation: Violation;
  /** 1-based number of the failover it fell in, among the run's promotions. */
  failover: number;
  /** Why this loss is the replication mode's, not a bug (the failover, the lag, the window). */
  explanation: string;
}

export type ViolationKind =
  | 'token-order'
  | 'overlap'
  | 'expired-renewal'
  | 'counter'
  | 'late-abort'
  | 'slow-takeover'
  | 'job-outcome'
  | 'superseded-completion'
  | 'slot-twice'
  | 'leak'
  | 'acknowledged-lost'
  | 'enqueue-duplicate'
  | 'partition-order'
  | 'limit-exceeded'
  | 'step-once'
  | 'linearizability';
