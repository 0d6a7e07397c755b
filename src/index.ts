// Public entry point of the `leasehold` package: re-exports only.
export { Leasehold, type LeaseholdFacade } from './leasehold.js';
export type { ConnectOptions, LeaseholdEvents, MemoryOptions } from './leasehold-options.js';
export { ControlManager } from './controls/control-manager.js';
export * from './core/errors.js';
export type {
  FencingToken,
  Job,
  JobAttemptError,
  JobExplanation,
  JobExplanationReason,
  JobStatus,
  JobStep,
  Lease,
  LeaseListFilter,
  LeaseState,
  QueueFairness,
  QueueRate,
  QueueSettings,
  SemaphorePermit,
  WorkerInfo,
  WorkerStatus,
} from './core/types.js';
export { type Clock, type Timer, SystemClock, ManualClock, systemClock } from './core/clock.js';
export type { Duration } from './core/duration.js';
export { LIMITS } from './core/validate.js';
export type * from './engine/engine.js';
export type * from './engine/jobs.js';
export type * from './engine/locks.js';
export type * from './engine/semaphores.js';
export type * from './engine/notifications.js';
export type {
  StepTransaction,
  JobStepOutcome,
  JobStepRunParams,
  JobSleepParams,
  StepOperations,
} from './engine/steps.js';
export {
  PostgresEngine,
  type PostgresEngineOptions,
  type PoolMode,
} from './engine/postgres/postgres-engine.js';
export { MemoryEngine, type MemoryEngineOptions } from './engine/memory/memory-engine.js';
export { MemoryTransaction } from './engine/memory/memory-steps.js';
export {
  ENGINE_CALLS,
  instrumentEngine,
  type EngineCallEvent,
  type EngineCallEventOf,
  type EngineCallListener,
  type EngineCallParams,
  type EngineCallResult,
  type EngineCallName,
  type InstrumentedEngine,
} from './engine/instrumented-engine.js';
export {
  DEFAULT_DURATION_BUCKETS_MS,
  EngineMetrics,
  type EngineMetricsSnapshot,
  type OperationMetrics,
} from './engine/engine-metrics.js';
export type { EngineOperationName, EngineOperations } from './engine/families.js';
export {
  LeaseholdMetrics,
  type JobOutcome,
  type MetricsOptions,
} from './metrics/leasehold-metrics.js';
export {
  LeaseManager,
  type AcquireOptions,
  type HoldOptions,
  type LeaseContext,
  type LeaseTerm,
  type ListOptions,
  type WithLeaseResult,
  type HolderRef,
  type ReleaseByIdOptions,
} from './leases/lease-manager.js';
export { HeldLease, type HeldLeaseState, type HeldLeaseCallbacks } from './core/held-lease.js';
export { defaultMargin } from './core/trust.js';
export { defaultHolderId } from './runtime/identity.js';
// --- queue and workers ---
export { Queue, type EnqueuedJob, type BulkJob, ENQUEUE_BATCH_MAX } from './queue/queue.js';
export { QUEUE_LIMITS, type EnqueueOptions } from './queue/enqueue-options.js';
export {
  FLOW_LIMITS,
  type FlowDefinition,
  type FlowChild,
  type FlowChildOptions,
  type FlowRootOptions,
  type FanInDefinition,
  type FlowJob,
  type EnqueuedFlow,
} from './queue/job-flows.js';
export { PARENT_POLICIES, type ParentPolicy, type JobChild } from './core/flows.js';
export type * from './engine/flows.js';
export {
  BULK_BATCH,
  BULK_STATUSES,
  type BulkAction,
  type BulkOptions,
  type JobFilter,
} from './queue/bulk-operations.js';
export { SEARCH_TEXT_MAX, type JobSearchOptions } from './queue/job-search.js';
export {
  SELECTION_MAX,
  type SelectionOutcome,
  type SelectionResult,
} from './queue/job-selection.js';
export { SEARCH_SCAN_ROWS } from './engine/job-admin.js';
export { QUEUE_SETTINGS_LIMITS, type QueueConfiguration } from './queue/queue-settings.js';
export { Message, type NackOptions } from './queue/message.js';
export {
  RECEIVE_LIMITS,
  type ReceiveOptions,
  type ReceiveManyOptions,
  type TryReceiveOptions,
} from './queue/receive-options.js';
export type { WaitForOptions } from './queue/wait-options.js';
export type * from './engine/queues.js';
export type * from './engine/trends.js';
export type { QueueTrendMinute, TrendDepth } from './core/trends.js';
export {
  TREND_WINDOWS,
  type TrendPoint,
  type TrendSeries,
  type TrendWindow,
  type TrendsOptions,
} from './queue/trend-series.js';
export {
  JobManager,
  type ClaimOptions,
  type ClaimRef,
  type JobFailureReport,
  type JobListOptions,
  type QueueOverview,
} from './queue/job-manager.js';
export { Worker, type WorkerEvents, type WorkerState, type DrainResult } from './queue/worker.js';
export type { RunUntilEmptyResult } from './queue/run-until-empty.js';
export type { WorkerOptions, JobHandler, JobContext } from './queue/worker-options.js';
export {
  JobSleepSignal,
  SLEEP_MAX_MS,
  type StepFunction,
  type StepInfo,
} from './queue/job-steps.js';
export { PermanentJobError } from './queue/retry-policy.js';
export type { JobTypes, TypedJob, TypedHandlers, TypedEnqueue } from './queue/typed-jobs.js';
export {
  Maintainer,
  MAINTENANCE_LOCK,
  type MaintainerOptions,
  type MaintenanceCycle,
} from './queue/maintenance/maintainer.js';
export { shardedPartitionKey } from './queue/partition-shard.js';
// --- locks and fences ---
export { LockManager } from './locks/lock-manager.js';
export type {
  FencedLock,
  Lock,
  LockKind,
  LockOptions,
  LockToken,
  LockedFunction,
  TryLockResult,
} from './locks/lock.js';
export { AdvisoryLock } from './locks/advisory-lock.js';
export { SessionLock } from './locks/session-lock.js';
// The engine-level handle of the same name stays reachable under a name of its own.
export type { SessionLock as EngineSessionLock } from './engine/locks.js';
export { LeaseLock, type LeaseLockOptions } from './locks/lease-lock.js';
export {
  Semaphore,
  type SemaphoreOptions,
  type PermitOptions,
  type HoldPermitOptions,
} from './locks/semaphore.js';
export { HeldPermit, type HeldPermitCallbacks } from './locks/held-permit.js';
export { Fence } from './locks/fence.js';
// --- elections and schedules ---
export {
  Election,
  type ElectionAttempt,
  type ElectionEvents,
  type ElectionState,
  type LeaderInfo,
} from './locks/election.js';
export type {
  ElectionCallbacks,
  ElectionOptions,
  ElectionTiming,
} from './locks/election-options.js';
export { Schedule, type ScheduleEvents, type ScheduleState } from './schedules/schedule.js';
export type { ScheduleMode, ScheduleOptions } from './schedules/schedule-options.js';
export type {
  ScheduledFunction,
  ScheduledRun,
  SlotOutcome,
  SlotResult,
} from './schedules/slot-run.js';
