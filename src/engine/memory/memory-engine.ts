/**
 * The whole engine in one process: for tests, for examples, and for single-process programs
 * that want leasehold's semantics without a database. State lives as long as the object.
 * Like PostgresEngine, it composes one module per family and only delegates here.
 */
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { ClosedError } from '../../core/errors.js';
import type { Engine, EngineCapabilities, MigrationReport } from '../engine.js';
import type { JobOperations, WorkerOperations } from '../jobs.js';
import type { LockOperations } from '../locks.js';
import type { NotificationOperations } from '../notifications.js';
import { MemoryControls } from './memory-controls.js';
import { MemoryJobs } from './memory-jobs.js';
import { MemoryLeases } from './memory-leases.js';
import { MemoryLocks } from './memory-locks.js';
import { MemoryNotifier } from './memory-notifier.js';
import { MemoryWorkers } from './memory-workers.js';

export interface MemoryEngineOptions {
  /** Decides validity and drives timers. Give a ManualClock to control time in tests. */
  clock?: Clock;
}

const CAPABILITIES: EngineCapabilities = {
  crossProcess: false,
  advisoryLocks: true,
  sessionLocks: true,
  notifications: true,
  callerTransactions: false,
};

export class MemoryEngine implements Engine {
  readonly name = 'memory' as const;
  readonly capabilities = CAPABILITIES;
  readonly clock: Clock;
  private readonly leases: MemoryLeases;
  private readonly notifier = new MemoryNotifier();
  private readonly controls: MemoryControls;
  private closed = false;

  constructor(options: MemoryEngineOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.leases = new MemoryLeases(() => this.clock.now());
    this.controls = new MemoryControls(() => this.clock.now());
  }

  async migrate(): Promise<MigrationReport> {
    return { applied: [], version: 0 };
  }

  async now(): Promise<Date> {
    return this.clock.now();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.locks.close(new ClosedError('MemoryEngine')); // as dropped connections: holders are told
  }

  // --- leases -------------------------------------------------------------------------------
  leaseAcquire: Engine['leaseAcquire'] = async (p) => this.open(this.leases).leaseAcquire(p);
  leaseRenew: Engine['leaseRenew'] = async (p) => this.open(this.leases).leaseRenew(p);
  leaseRelease: Engine['leaseRelease'] = async (p) => this.open(this.leases).leaseRelease(p);
  leaseReleaseById: Engine['leaseReleaseById'] = async (p) =>
    this.open(this.leases).leaseReleaseById(p);
  leaseAcquireMany: Engine['leaseAcquireMany'] = async (p) =>
    this.open(this.leases).leaseAcquireMany(p);
  leaseRenewMany: Engine['leaseRenewMany'] = async (p) => this.open(this.leases).leaseRenewMany(p);
  leaseReleaseMany: Engine['leaseReleaseMany'] = async (p) =>
    this.open(this.leases).leaseReleaseMany(p);
  leaseGet: Engine['leaseGet'] = async (p) => this.open(this.leases).leaseGet(p);
  leaseGetById: Engine['leaseGetById'] = async (p) => this.open(this.leases).leaseGetById(p);
  leaseList: Engine['leaseList'] = async (p) => this.open(this.leases).leaseList(p);
  leaseCountActive: Engine['leaseCountActive'] = async () =>
    this.open(this.leases).leaseCountActive();

  // --- notifications ------------------------------------------------------------------------
  notifyListen: NotificationOperations['notifyListen'] = async (p) =>
    this.open(this.notifier).notifyListen(p);
  notifySend: NotificationOperations['notifySend'] = async (p) =>
    this.open(this.notifier).notifySend(p);

  // --- controls -----------------------------------------------------------------------------
  controlGet: Engine['controlGet'] = async (p) => this.open(this.controls).controlGet(p);
  controlSet: Engine['controlSet'] = async (p) => this.open(this.controls).controlSet(p);

  // --- locks, elections, schedule slots, fences ---------------------------------------------
  private readonly locks = new MemoryLocks(
    () => this.clock.now(),
    (topic, payload) => this.notifier.publish(topic, payload),
  );
  advisoryTryLock: LockOperations['advisoryTryLock'] = async (p) =>
    this.open(this.locks).advisoryTryLock(p);
  advisoryLock: LockOperations['advisoryLock'] = async (p) => this.open(this.locks).advisoryLock(p);
  sessionLockTryAcquire: LockOperations['sessionLockTryAcquire'] = async (p) =>
    this.open(this.locks).sessionLockTryAcquire(p);
  sessionLockAcquire: LockOperations['sessionLockAcquire'] = async (p) =>
    this.open(this.locks).sessionLockAcquire(p);
  leaseLockAcquire: LockOperations['leaseLockAcquire'] = async (p) =>
    this.open(this.locks).leaseLockAcquire(p);
  leaseLockRenew: LockOperations['leaseLockRenew'] = async (p) =>
    this.open(this.locks).leaseLockRenew(p);
  leaseLockRelease: LockOperations['leaseLockRelease'] = async (p) =>
    this.open(this.locks).leaseLockRelease(p);
  leaseLockGet: LockOperations['leaseLockGet'] = async (p) => this.open(this.locks).leaseLockGet(p);
  leaseLockList: LockOperations['leaseLockList'] = async (p) =>
    this.open(this.locks).leaseLockList(p);
  scheduleSlotClaim: LockOperations['scheduleSlotClaim'] = async (p) =>
    this.open(this.locks).scheduleSlotClaim(p);
  scheduleSlotList: LockOperations['scheduleSlotList'] = async (p) =>
    this.open(this.locks).scheduleSlotList(p);
  scheduleSlotPrune: LockOperations['scheduleSlotPrune'] = async (p) =>
    this.open(this.locks).scheduleSlotPrune(p);
  scheduleList: LockOperations['scheduleList'] = async (p) => this.open(this.locks).scheduleList(p);
  fenceCheck: LockOperations['fenceCheck'] = async (p) => this.open(this.locks).fenceCheck(p);
  fenceGet: LockOperations['fenceGet'] = async (p) => this.open(this.locks).fenceGet(p);

  // --- jobs and workers ---------------------------------------------------------------------
  private readonly jobs = new MemoryJobs(
    () => this.clock.now(),
    (topic, payload) => this.notifier.publish(topic, payload),
  );
  private readonly workers = new MemoryWorkers(() => this.clock.now());
  jobEnqueue: JobOperations['jobEnqueue'] = async (p) => this.open(this.jobs).jobEnqueue(p);
  jobClaimBatch: JobOperations['jobClaimBatch'] = async (p) =>
    this.open(this.jobs).jobClaimBatch(p);
  jobRenewLeases: JobOperations['jobRenewLeases'] = async (p) =>
    this.open(this.jobs).jobRenewLeases(p);
  jobComplete: JobOperations['jobComplete'] = async (p) => this.open(this.jobs).jobComplete(p);
  jobFail: JobOperations['jobFail'] = async (p) => this.open(this.jobs).jobFail(p);
  jobHandBack: JobOperations['jobHandBack'] = async (p) => this.open(this.jobs).jobHandBack(p);
  jobCancel: JobOperations['jobCancel'] = async (p) => this.open(this.jobs).jobCancel(p);
  jobRetry: JobOperations['jobRetry'] = async (p) => this.open(this.jobs).jobRetry(p);
  jobDelete: JobOperations['jobDelete'] = async (p) => this.open(this.jobs).jobDelete(p);
  jobGet: JobOperations['jobGet'] = async (p) => this.open(this.jobs).jobGet(p);
  jobList: JobOperations['jobList'] = async (p) => this.open(this.jobs).jobList(p);
  jobCounts: JobOperations['jobCounts'] = async () => this.open(this.jobs).jobCounts();
  jobRescueExpired: JobOperations['jobRescueExpired'] = async (p) =>
    this.open(this.jobs).jobRescueExpired(p);
  jobPrune: JobOperations['jobPrune'] = async (p) => this.open(this.jobs).jobPrune(p);
  workerRegister: WorkerOperations['workerRegister'] = async (p) =>
    this.open(this.workers).workerRegister(p);
  workerHeartbeat: WorkerOperations['workerHeartbeat'] = async (p) =>
    this.open(this.workers).workerHeartbeat(p);
  workerList: WorkerOperations['workerList'] = async (p) => this.open(this.workers).workerList(p);
  workerMarkDead: WorkerOperations['workerMarkDead'] = async (p) =>
    this.open(this.workers).workerMarkDead(p);

  /** Every family call passes here, so nothing runs on a closed engine. */
  private open<T>(family: T): T {
    if (this.closed) throw new ClosedError('MemoryEngine');
    return family;
  }
}
