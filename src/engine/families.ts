/**
 * The families of the engine seam, and the one list of their operations. An engine is its
 * families plus a few basics (name, capabilities, clock, migrate, now, close); compose.ts turns
 * one implementation object per family into the engine's methods, and instrumented-engine.ts
 * wraps every operation, both from the list below.
 *
 * The list is checked by the compiler both ways: a name that is not an operation of its family
 * fails `satisfies`, and an operation of a family missing from the list fails `everyListed`.
 * So adding an operation to a family's interface is a compile error until it is listed here,
 * and then every engine must implement it (their families are typed by the interfaces).
 */
import type { ConnectionLockOperations } from './connection-locks.js';
import type { ControlOperations } from './controls.js';
import type { FenceOperations } from './fences.js';
import type { FlowOperations } from './flows.js';
import type { JobAdminOperations } from './job-admin.js';
import type { JobOperations } from './jobs.js';
import type { LeaseLockOperations } from './lease-locks.js';
import type { LeaseOperations } from './leases.js';
import type { NotificationOperations } from './notifications.js';
import type { QueueOperations } from './queues.js';
import type { ScheduleSlotOperations } from './schedule-slots.js';
import type { SemaphoreOperations } from './semaphores.js';
import type { StepOperations } from './steps.js';
import type { TrendOperations } from './trends.js';
import type { WorkerOperations } from './workers.js';

/** One implementation per family: what an engine composes (the same object may serve several). */
export interface EngineFamilies {
  readonly leases: LeaseOperations;
  readonly connectionLocks: ConnectionLockOperations;
  readonly leaseLocks: LeaseLockOperations;
  readonly semaphores: SemaphoreOperations;
  readonly scheduleSlots: ScheduleSlotOperations;
  readonly fences: FenceOperations;
  readonly jobs: JobOperations;
  readonly jobAdmin: JobAdminOperations;
  readonly workers: WorkerOperations;
  readonly notifications: NotificationOperations;
  readonly controls: ControlOperations;
  readonly queues: QueueOperations;
  readonly steps: StepOperations;
  readonly flows: FlowOperations;
  readonly trends: TrendOperations;
}

export type EngineFamilyName = keyof EngineFamilies;

/** Every operation of every family. */
export interface EngineOperations
  extends
    LeaseOperations,
    ConnectionLockOperations,
    LeaseLockOperations,
    SemaphoreOperations,
    ScheduleSlotOperations,
    FenceOperations,
    JobOperations,
    JobAdminOperations,
    WorkerOperations,
    NotificationOperations,
    ControlOperations,
    QueueOperations,
    StepOperations,
    FlowOperations,
    TrendOperations {}

export type EngineOperationName = keyof EngineOperations;

/** The operations of each family, by name. */
export const FAMILY_OPERATIONS = {
  leases: [
    'leaseAcquire',
    'leaseRenew',
    'leaseRelease',
    'leaseReleaseById',
    'leaseAcquireMany',
    'leaseRenewMany',
    'leaseReleaseMany',
    'leaseGet',
    'leaseGetById',
    'leaseList',
    'leaseCountActive',
    'leaseTermList',
    'leaseTermPrune',
    'leaseTermRecording',
    'leaseTermRecordingSet',
  ],
  connectionLocks: [
    'advisoryTryLock',
    'advisoryLock',
    'sessionLockTryAcquire',
    'sessionLockAcquire',
  ],
  leaseLocks: [
    'leaseLockAcquire',
    'leaseLockRenew',
    'leaseLockRelease',
    'leaseLockGet',
    'leaseLockList',
  ],
  semaphores: ['semaphoreAcquire', 'semaphoreRenew', 'semaphoreRelease', 'semaphoreList'],
  scheduleSlots: ['scheduleSlotClaim', 'scheduleSlotList', 'scheduleSlotPrune', 'scheduleList'],
  fences: ['fenceCheck', 'fenceGet'],
  jobs: [
    'jobEnqueue',
    'jobClaimBatch',
    'jobRenewLeases',
    'jobProgress',
    'jobComplete',
    'jobFail',
    'jobHandBack',
  ],
  jobAdmin: [
    'jobCancel',
    'jobRetry',
    'jobDelete',
    'jobRetryMatching',
    'jobCancelMatching',
    'jobDeleteMatching',
    'jobGet',
    'jobWatch',
    'jobList',
    'jobSearch',
    'jobCounts',
    'jobRescueExpired',
    'jobPrune',
  ],
  workers: ['workerRegister', 'workerHeartbeat', 'workerList', 'workerMarkDead'],
  notifications: ['notifyListen', 'notifySend'],
  controls: ['controlGet', 'controlSet'],
  queues: ['queueSettingsGet', 'queueSettingsList', 'queueConfigure', 'jobExplain'],
  steps: ['jobSteps', 'jobStepRun', 'jobSleep'],
  flows: ['jobEnqueueFlow', 'jobChildren'],
  trends: ['trendsRecord', 'trendsList', 'trendsPrune'],
} as const satisfies { readonly [F in EngineFamilyName]: readonly (keyof EngineFamilies[F])[] };

type Unlisted<F extends EngineFamilyName> = Exclude<
  keyof EngineFamilies[F],
  (typeof FAMILY_OPERATIONS)[F][number]
>;

/** Compile-time only: names each operation a family declares but the list above lacks. */
const everyListed: {
  readonly [F in EngineFamilyName]: [Unlisted<F>] extends [never] ? true : Unlisted<F>;
} = {
  leases: true,
  connectionLocks: true,
  leaseLocks: true,
  semaphores: true,
  scheduleSlots: true,
  fences: true,
  jobs: true,
  jobAdmin: true,
  workers: true,
  notifications: true,
  controls: true,
  queues: true,
  steps: true,
  flows: true,
  trends: true,
};
void everyListed;

export const ENGINE_FAMILIES = Object.keys(FAMILY_OPERATIONS) as readonly EngineFamilyName[];

/** Every operation name, family by family. */
export const ENGINE_OPERATIONS: readonly EngineOperationName[] = ENGINE_FAMILIES.flatMap(
  (family) => FAMILY_OPERATIONS[family],
);
