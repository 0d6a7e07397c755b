// Public entry point of the `leasehold` package: re-exports only.
export { Leasehold, type ConnectOptions, type MemoryOptions } from './leasehold.js';
export * from './core/errors.js';
export type {
  FencingToken,
  Job,
  JobAttemptError,
  JobStatus,
  Lease,
  LeaseListFilter,
  LeaseState,
  WorkerInfo,
  WorkerStatus,
} from './core/types.js';
export { type Clock, type Timer, SystemClock, ManualClock, systemClock } from './core/clock.js';
export type { Duration } from './core/duration.js';
export { LIMITS } from './core/validate.js';
export type * from './engine/engine.js';
export type * from './engine/jobs.js';
export type * from './engine/locks.js';
export type * from './engine/notifications.js';
export { PostgresEngine, type PostgresEngineOptions } from './engine/postgres/postgres-engine.js';
export { MemoryEngine, type MemoryEngineOptions } from './engine/memory/memory-engine.js';
export {
  LeaseManager,
  type AcquireOptions,
  type HoldOptions,
  type LeaseContext,
  type LeaseTerm,
  type ListOptions,
  type WithLeaseResult,
} from './leases/lease-manager.js';
export { HeldLease, type HeldLeaseState, type HeldLeaseCallbacks } from './leases/held-lease.js';
export { defaultMargin } from './leases/trust.js';
export { defaultHolderId } from './runtime/identity.js';
