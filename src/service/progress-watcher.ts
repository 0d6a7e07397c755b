/**
 * The `job:progress` events of the SSE stream (decision 0251). Progress is written by workers in
 * other processes, so this instance cannot observe it as it happens; while at least one client
 * watches, it reads the running jobs once a second and sends the progress of each one whose
 * value (or attempt) changed since the last read. A job that finishes between two reads has its
 * last value on the job itself (GET /api/jobs/:id), as does a client that connects later.
 */
import type { JobProgress } from '../core/types.js';
import type { LeaseholdFacade } from '../leasehold.js';
import { BackgroundService } from '../runtime/service.js';

export interface JobProgressEvent {
  readonly id: number;
  readonly queue: string;
  readonly type: string | null;
  readonly attempts: number;
  readonly generation: number;
  readonly progress: JobProgress;
  readonly updatedAt: string;
}

/** Running jobs read per pass: a fleet's concurrency, with room. */
const RUNNING_READ = 500;

export class ProgressWatcher extends BackgroundService<number> {
  private readonly subscribers = new Set<(event: JobProgressEvent) => void>();
  /** What was last sent for each running job: its generation and progress as JSON. */
  private sent = new Map<number, string>();

  constructor(
    private readonly lh: LeaseholdFacade,
    intervalMs = 1_000,
  ) {
    super('progress-watcher', { intervalMs, firstRunDelayMs: 0, clock: lh.clock });
  }

  subscribe(fn: (event: JobProgressEvent) => void): () => void {
    this.subscribers.add(fn);
    this.start();
    return () => {
      this.subscribers.delete(fn);
    };
  }

  async runOnce(): Promise<number> {
    if (this.subscribers.size === 0) {
      this.sent.clear();
      return 0;
    }
    const running = await this.lh.jobs.list({ status: 'processing', limit: RUNNING_READ });
    const now = new Map<number, string>();
    let changed = 0;
    for (const job of running) {
      if (job.progress === null) continue;
      const seen = `${job.generation}:${JSON.stringify(job.progress)}`;
      now.set(job.id, seen);
      if (this.sent.get(job.id) === seen) continue;
      changed++;
      const event: JobProgressEvent = {
        id: job.id,
        queue: job.queue,
        type: job.type,
        attempts: job.attempts,
        generation: job.generation,
        progress: job.progress,
        updatedAt: job.updatedAt.toISOString(),
      };
      for (const fn of this.subscribers) fn(event);
    }
    this.sent = now;
    return changed;
  }
}
