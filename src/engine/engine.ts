/**
 * The engine seam. Everything above it (held leases, locks, elections, schedules, the worker, the
 * HTTP service) talks to an Engine and nothing else, so it runs unchanged on PostgreSQL and in
 * memory. Rules every engine obeys:
 *
 * - Methods are named entity-then-verb (`leaseAcquire`, later `jobClaimBatch`) and take one
 *   params object, so adding a field never breaks a caller.
 * - They return domain types from core/, never raw rows, and throw only LeaseholdErrors
 *   (a driver error is mapped at the engine's edge: a lost connection is `unavailable`).
 * - Validity is decided by the engine's clock: `now()` of the database for PostgreSQL, the
 *   injected Clock for memory. Inputs arrive already validated by the layer above (the
 *   managers), so engines check invariants, not user input.
 * - Families live one per file (leases here; locks.ts, jobs.ts, notifications.ts) and each
 *   engine implements them one module per family. Connection-bound features are declared in
 *   `capabilities` so callers and the conformance suite can tell a real gap from a bug.
 */
import type { Clock } from '../core/clock.js';
import type { FencingToken, Lease, LeaseListFilter } from '../core/types.js';
import type { ControlOperations } from './controls.js';
import type { JobOperations, WorkerOperations } from './jobs.js';
import type { LockOperations } from './locks.js';
import type { NotificationOperations } from './notifications.js';

/**
 * A caller's own database transaction: anything with pg's `query(text, values)`, such as a
 * `PoolClient` inside BEGIN. Operations given one run on it, so they commit or roll back with
 * the caller's business writes. Only engines with the `callerTransactions` capability accept it.
 */
export interface CallerTransaction {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount?: number | null }>;
}

export interface EngineCapabilities {
  /** Several processes can share this engine's state (false for memory). */
  readonly crossProcess: boolean;
  /** pg_advisory_lock on a dedicated connection (emulated in process by memory). */
  readonly advisoryLocks: boolean;
  /** Row locks held by an open transaction on a dedicated connection. */
  readonly sessionLocks: boolean;
  /** Push wake-ups (LISTEN/NOTIFY, or in-process events for memory). */
  readonly notifications: boolean;
  /** Operations can join a caller's own database transaction. */
  readonly callerTransactions: boolean;
}

export interface LeaseAcquireParams {
  resource: string;
  holder: string;
  ttlMs: number;
  metadata?: Record<string, unknown> | null;
}

export type LeaseAcquireResult =
  | { readonly acquired: true; readonly lease: Lease }
  /** `current` is the live lease that blocked us (null only if it vanished in between). */
  | { readonly acquired: false; readonly current: Lease | null };

export interface LeaseRenewParams {
  resource: string;
  holder: string;
  /** Omitted only by callers of the seed-000 HTTP API that never saw a token; the library always sends it. */
  token?: FencingToken;
  ttlMs: number;
}

export interface LeaseReleaseParams {
  resource: string;
  holder: string;
  token?: FencingToken;
}

export interface LeaseReleaseByIdParams {
  id: number;
  /** Omit to release whoever holds it (an administrator's action). */
  holder?: string;
  token?: FencingToken;
}

export interface LeaseListParams {
  filter: LeaseListFilter;
  limit: number;
  offset: number;
  /** Only leases whose resource starts with this prefix. */
  resourcePrefix?: string;
}

export interface LeaseOperations {
  /**
   * Takes the lease if it is free, expired or released, bumping its token; extends it (same
   * token) if `holder` already holds it live, so a retried request cannot lock out its sender.
   */
  leaseAcquire(params: LeaseAcquireParams): Promise<LeaseAcquireResult>;
  /** Extends a live lease held by `holder` with `token`; null when it is no longer theirs. */
  leaseRenew(params: LeaseRenewParams): Promise<Lease | null>;
  /** Ends a live lease held by `holder` with `token`; null when it was no longer theirs. */
  leaseRelease(params: LeaseReleaseParams): Promise<Lease | null>;
  leaseReleaseById(params: LeaseReleaseByIdParams): Promise<Lease | null>;
  /**
   * The three calls above for many leases at once (the service coalesces concurrent requests
   * into these): results in input order, each exactly what its single call would have answered
   * had the calls run one after another in that order. A resource may appear more than once;
   * an empty list answers an empty list. Not atomic as a whole: each item commits or fails on
   * its own terms, and a failure of the statement itself rejects the whole call.
   */
  leaseAcquireMany(params: readonly LeaseAcquireParams[]): Promise<LeaseAcquireResult[]>;
  leaseRenewMany(params: readonly LeaseRenewParams[]): Promise<(Lease | null)[]>;
  leaseReleaseMany(params: readonly LeaseReleaseParams[]): Promise<(Lease | null)[]>;
  leaseGet(params: { resource: string }): Promise<Lease | null>;
  leaseGetById(params: { id: number }): Promise<Lease | null>;
  leaseList(params: LeaseListParams): Promise<Lease[]>;
  /** How many leases are live right now (held, not released, not expired): counted, not listed. */
  leaseCountActive(): Promise<number>;
}

export interface MigrationReport {
  /** Versions applied by this call (empty when the storage was already current). */
  readonly applied: number[];
  readonly version: number;
}

export interface Engine
  extends
    LeaseOperations,
    LockOperations,
    JobOperations,
    WorkerOperations,
    NotificationOperations,
    ControlOperations {
  readonly name: 'postgres' | 'memory';
  readonly capabilities: EngineCapabilities;
  /** The clock that schedules this engine's timers (and, for memory, decides validity). */
  readonly clock: Clock;
  /** Creates or upgrades the engine's storage; idempotent and safe under concurrent callers. */
  migrate(): Promise<MigrationReport>;
  /** The engine's notion of now: the database clock, or the injected clock. */
  now(): Promise<Date>;
  close(): Promise<void>;
}
