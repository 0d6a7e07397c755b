/**
 * The seed 000 task worker in process: the library worker (`lh.worker`) on the `tasks` queue,
 * doing the same demo work as the HTTP worker (sleep `task_data.sleep_duration_seconds`, stop
 * the moment the job's signal fires) with the same optional crashes. Claims, renewals and
 * completions go straight to PostgreSQL and are fenced by the job's generation, exactly like
 * the HTTP task routes, so both kinds of worker can serve one queue side by side.
 *
 * It also runs queue maintenance by default (rescue of expired claims, sweep of silent
 * workers): every instance may run it and each cycle runs on only one of them, so a fleet of
 * in-process workers with no service beside it still gets a crashed worker's tasks back.
 */
import { systemClock, type Clock } from '../core/clock.js';
import type { Job } from '../core/types.js';
import type { LeaseholdFacade } from '../leasehold.js';
import type { Maintainer, MaintainerOptions } from '../queue/maintenance/maintainer.js';
import type { RunUntilEmptyResult } from '../queue/run-until-empty.js';
import type { DrainResult, Worker } from '../queue/worker.js';
import { silentLogger, type Logger } from '../runtime/logger.js';
import { TASKS_QUEUE } from '../tasks/task-domain.js';
import { crashDelayMs, demoWork } from './demo-work.js';

export interface QueueTaskWorkerOptions {
  lh: LeaseholdFacade;
  /** Id in the workers table and in `claimed_by` (default: a fresh unique id). */
  id?: string;
  /** Tasks run at once (default 1, like the HTTP worker). */
  concurrency?: number;
  /** Claim duration (default 10 s); renewed every third of it. */
  leaseMs?: number;
  /** Poll for tasks this often when idle (default 2 s); enqueue notifications wake it sooner. */
  pollIntervalMs?: number;
  /** Chance per task of dying mid-task, 0..1 (default 0). */
  crashRate?: number;
  /** How to die; injected so tests can observe instead of exiting. */
  crash?: () => void;
  /** Queue maintenance beside the worker (default on); `false` when something else runs it. */
  maintenance?: MaintainerOptions | false;
  logger?: Logger;
  clock?: Clock;
  random?: () => number;
}

export class QueueTaskWorker {
  readonly worker: Worker;
  private readonly maintainer: Maintainer | undefined;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(private readonly o: QueueTaskWorkerOptions) {
    this.clock = o.clock ?? o.lh.clock ?? systemClock;
    this.random = o.random ?? Math.random;
    this.worker = o.lh.worker({
      queues: TASKS_QUEUE,
      concurrency: o.concurrency ?? 1,
      leaseTtl: o.leaseMs ?? 10_000,
      ...(o.pollIntervalMs === undefined ? {} : { pollInterval: o.pollIntervalMs }),
      logger: o.logger ?? silentLogger,
      ...(o.id === undefined ? {} : { id: o.id, name: o.id }),
      handler: (job, { signal }) => this.run(job, signal),
    });
    this.maintainer =
      o.maintenance === false
        ? undefined
        : o.lh.maintainer({ interval: 1_000, logger: o.logger ?? silentLogger, ...o.maintenance });
  }

  get id(): string {
    return this.worker.id;
  }

  /** Registers the worker row and starts claiming. */
  async start(): Promise<void> {
    await this.worker.start();
    this.maintainer?.start();
  }

  /**
   * Stops claiming, lets the tasks in hand finish for up to `timeoutMs`, hands the rest back
   * at once (pending again, attempt given back), and leaves the worker row `stopped`.
   */
  async stop({ timeoutMs = 5_000 }: { timeoutMs?: number } = {}): Promise<DrainResult> {
    const drained = await this.worker.drain({ timeout: timeoutMs });
    await this.maintainer?.stop();
    return drained;
  }

  /**
   * Runs the tasks that are ready, then stops (`worker.runUntilEmpty`, decision 0259): no
   * maintenance meanwhile, a run this short is no instance to keep the queue's house.
   */
  runUntilEmpty({ timeoutMs = 60_000 }: { timeoutMs?: number } = {}): Promise<RunUntilEmptyResult> {
    return this.worker.runUntilEmpty({ timeout: timeoutMs });
  }

  private async run(job: Job, signal: AbortSignal): Promise<unknown> {
    const crashAt = crashDelayMs(job.payload, this.o.crashRate ?? 0, this.random);
    const crash =
      crashAt === undefined
        ? undefined
        : this.clock.setTimer(crashAt, () => (this.o.crash ?? (() => process.exit(3)))());
    try {
      return await demoWork(job.payload, this.clock, signal);
    } finally {
      crash?.cancel();
    }
  }
}
