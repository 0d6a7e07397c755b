// Every conformance case family, in one list, so no engine can miss one.
import { runUntilEmptyCases } from './toolkit/run-until-empty.cases.js';
import type { EngineHarness } from './harness.js';
import { controlEngineCases } from './engine/controls.cases.js';
import { enqueueConflictEngineCases } from './engine/enqueue-conflicts.cases.js';
import { flowEngineCases } from './engine/flows.cases.js';
import { jobEngineCases } from './engine/jobs.cases.js';
import { leaseBatchEngineCases } from './engine/lease-batches.cases.js';
import { leaseEngineCases } from './engine/leases.cases.js';
import { leaseTermEngineCases } from './engine/lease-terms.cases.js';
import { lockEngineCases } from './engine/locks.cases.js';
import { notificationEngineCases } from './engine/notifications.cases.js';
import { queueSettingsEngineCases } from './engine/queue-settings.cases.js';
import { semaphoreEngineCases } from './engine/semaphores.cases.js';
import { workerEngineCases } from './engine/workers.cases.js';
import { bulkOperationCases } from './toolkit/bulk-operations.cases.js';
import { electionCases } from './toolkit/election.cases.js';
import { enqueueOptionCases } from './toolkit/enqueue-options.cases.js';
import { fenceCases } from './toolkit/fence.cases.js';
import { flowCases } from './toolkit/flows.cases.js';
import { heldLeaseCases } from './toolkit/held-lease.cases.js';
import { jobTimeoutCases } from './toolkit/job-timeout.cases.js';
import { lockCases } from './toolkit/locks.cases.js';
import { maintenanceCases } from './toolkit/maintenance.cases.js';
import { progressCases } from './toolkit/progress.cases.js';
import { pullConsumerCases } from './toolkit/pull-consumer.cases.js';
import { scheduleCases } from './toolkit/schedules.cases.js';
import { semaphoreCases } from './toolkit/semaphore.cases.js';
import { stepCases } from './toolkit/steps.cases.js';
import { waitForCases } from './toolkit/wait-for.cases.js';
import { workerCases } from './toolkit/worker.cases.js';

export function defineAllCases(h: EngineHarness): void {
  // engine level: one operation family at a time
  leaseEngineCases(h);
  leaseBatchEngineCases(h);
  leaseTermEngineCases(h);
  notificationEngineCases(h);
  lockEngineCases(h);
  semaphoreEngineCases(h);
  jobEngineCases(h);
  enqueueConflictEngineCases(h);
  workerEngineCases(h);
  controlEngineCases(h);
  queueSettingsEngineCases(h);
  flowEngineCases(h);
  // toolkit level: the engine-agnostic services built on top
  heldLeaseCases(h);
  lockCases(h);
  semaphoreCases(h);
  electionCases(h);
  scheduleCases(h);
  fenceCases(h);
  workerCases(h);
  jobTimeoutCases(h);
  progressCases(h);
  pullConsumerCases(h);
  enqueueOptionCases(h);
  waitForCases(h);
  maintenanceCases(h);
  bulkOperationCases(h);
  stepCases(h);
  flowCases(h);
  runUntilEmptyCases(h);
}
