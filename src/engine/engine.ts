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
 * - Families live one per file (leases.ts, connection-locks.ts, lease-locks.ts, semaphores.ts,
 *   schedule-slots.ts, fences.ts, jobs.ts (jobs and workers), notifications.ts, controls.ts,
 *   steps.ts),
 *   listed in families.ts; each engine implements them one module per family and composes them
 *   with compose.ts. Connection-bound features are declared in `capabilities` so callers and the
 *   conformance suite can tell a real gap from a bug.
 */
import type { Clock } from '../core/clock.js';
import type { EngineOperations } from './families.js';

// Where these used to be defined: importers of engine.ts keep working.
export type * from './leases.js';
export type { CallerTransaction } from './types.js';

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

export interface MigrationReport {
  /** Versions applied by this call (empty when the storage was already current). */
  readonly applied: number[];
  readonly version: number;
}

export interface Engine extends EngineOperations {
  /** For messages and metrics (`postgres`, `memory`, or a third engine's own name). */
  readonly name: string;
  readonly capabilities: EngineCapabilities;
  /** The clock that schedules this engine's timers (and, for memory, decides validity). */
  readonly clock: Clock;
  /** Creates or upgrades the engine's storage; idempotent and safe under concurrent callers. */
  migrate(): Promise<MigrationReport>;
  /** The engine's notion of now: the database clock, or the injected clock. */
  now(): Promise<Date>;
  close(): Promise<void>;
}
