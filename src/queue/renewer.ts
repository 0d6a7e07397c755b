/**
 * Keeps every lease of a worker alive with one statement per interval, however many jobs are
 * in flight (a statement per job is what makes other queues' renewals melt under load). A job
 * left out of the answer is no longer this worker's: it expired, was cancelled, rescued or
 * taken over, and its signal fires at once.
 */
import { LeaseLostError } from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import { BackgroundService, type ServiceOptions } from '../runtime/service.js';
import type { JobRun } from './job-run.js';

export interface RenewerOptions extends ServiceOptions {
  engine: Engine;
  workerId: string;
  leaseTtlMs: number;
  /** The runs whose leases this worker still owns (running, or waiting for their outcome to flush). */
  runs: () => Iterable<JobRun>;
  onLost: (run: JobRun) => void;
}

export interface RenewRound {
  readonly renewed: number;
  readonly lost: number;
}

export class Renewer extends BackgroundService<RenewRound> {
  private waiters: (() => void)[] = [];

  constructor(private readonly o: RenewerOptions) {
    super('renewer', { jitterFraction: 0.05, firstRunDelayMs: o.intervalMs, ...o });
  }

  /** Resolves after a renewal round that started no earlier than now (a handler's `renew()`). */
  renewSoon(): Promise<void> {
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.poke();
    return done;
  }

  async runOnce(): Promise<RenewRound> {
    const waiters = this.waiters;
    this.waiters = [];
    try {
      return await this.renewAll();
    } finally {
      for (const resolve of waiters) resolve();
    }
  }

  private async renewAll(): Promise<RenewRound> {
    const runs = [...this.o.runs()].filter((run) => run.state !== 'done' && !run.lost);
    if (runs.length === 0) return { renewed: 0, lost: 0 };
    const sentAt = this.clock.monotonic();
    const renewed = await this.o.engine.jobRenewLeases({
      workerId: this.o.workerId,
      jobs: runs.map((run) => run.ref),
      leaseTtlMs: this.o.leaseTtlMs,
    });
    const still = new Set(renewed.map((r) => r.id));
    let lost = 0;
    for (const run of runs) {
      // Finished while the statement was out, or already lost (its trust deadline passed
      // meanwhile, and was reported then): nothing to confirm, nothing to report twice.
      if (run.state === 'done' || run.lost) continue;
      if (still.has(run.ref.id)) {
        run.confirm(sentAt);
      } else {
        lost++;
        run.abort(
          new LeaseLostError(
            `job:${run.ref.id}`,
            'the renewal did not return the job: it expired, was cancelled or was taken over',
          ),
        );
        this.o.onLost(run);
      }
    }
    return { renewed: still.size, lost };
  }
}
