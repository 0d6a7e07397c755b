/**
 * The whole engine in one process: for tests, for examples, and for single-process programs
 * that want leasehold's semantics without a database. State lives as long as the object.
 * Like PostgresEngine, it composes one module per family (compose.ts makes them its methods).
 */
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { ClosedError } from '../../core/errors.js';
import { ComposedEngine } from '../compose.js';
import type { Engine, EngineCapabilities, MigrationReport } from '../engine.js';
import { MemoryControls } from './memory-controls.js';
import { MemoryQueues } from './memory-queues.js';
import { MemoryJobs } from './memory-jobs.js';
import { MemoryJobAdmin } from './memory-job-admin.js';
import { MemoryJobStore } from './memory-job-store.js';
import { MemoryLeases } from './memory-leases.js';
import { MemoryConnectionLocks } from './memory-connection-locks.js';
import { MemoryFences } from './memory-fences.js';
import { MemoryLeaseLocks } from './memory-lease-locks.js';
import { MemoryTermHistory } from './memory-term-history.js';
import { MemoryScheduleSlots } from './memory-schedule-slots.js';
import { MemorySemaphores } from './memory-semaphores.js';
import { MemorySteps } from './memory-steps.js';
import { MemoryNotifier } from './memory-notifier.js';
import { MemoryJobTallies } from './memory-job-tallies.js';
import { MemoryTrends } from './memory-trends.js';
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

export class MemoryEngine extends ComposedEngine implements Engine {
  readonly name = 'memory';
  readonly capabilities = CAPABILITIES;
  readonly clock: Clock;
  private readonly state: { closed: boolean };
  private readonly connectionLocks: MemoryConnectionLocks;

  constructor(options: MemoryEngineOptions = {}) {
    const clock = options.clock ?? systemClock;
    const now = (): Date => clock.now();
    const notifier = new MemoryNotifier();
    const publish = (topic: string, payload: string): void => notifier.publish(topic, payload);
    const connectionLocks = new MemoryConnectionLocks();
    const state = { closed: false };
    const workers = new MemoryWorkers(now);
    const termHistory = new MemoryTermHistory();
    // The queue family explains a job from the job and worker families' facts; `jobs` is made
    // just below (its claims and the store's finishes read the queue family), hence the closure.
    const queues: MemoryQueues = new MemoryQueues(publish, {
      jobFacts: (id) => jobs.explainFacts(id),
      served: (queue) => workers.serves(queue),
    });
    const tallies = new MemoryJobTallies();
    // One store of job records for every job family: the worker's side, the administration,
    // flows, steps and trends all read and change the same jobs.
    const store = new MemoryJobStore(now, publish, queues);
    const jobs: MemoryJobs = new MemoryJobs(store, queues, tallies);
    super(
      {
        leases: new MemoryLeases(now, termHistory),
        connectionLocks,
        leaseLocks: new MemoryLeaseLocks(now, publish, termHistory),
        semaphores: new MemorySemaphores(now, publish),
        scheduleSlots: new MemoryScheduleSlots(now),
        fences: new MemoryFences(),
        jobs,
        jobAdmin: new MemoryJobAdmin(store),
        workers,
        notifications: notifier,
        controls: new MemoryControls(now),
        queues,
        steps: new MemorySteps(now, store, publish),
        flows: store.flows,
        trends: new MemoryTrends(now, () => store.records(), tallies),
      },
      {
        // Every call is async and passes here, so nothing runs on a closed engine.
        guard: () => {
          if (state.closed) throw new ClosedError('MemoryEngine');
        },
      },
    );
    this.clock = clock;
    this.state = state;
    this.connectionLocks = connectionLocks;
  }

  async migrate(): Promise<MigrationReport> {
    return { applied: [], version: 0 };
  }

  async now(): Promise<Date> {
    return this.clock.now();
  }

  async close(): Promise<void> {
    this.state.closed = true;
    this.connectionLocks.close(new ClosedError('MemoryEngine')); // as dropped connections: holders are told
  }
}
