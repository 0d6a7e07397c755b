/**
 * The progress of every job a worker (or pull consumer) holds goes to the database in one
 * statement at most every `intervalMs` (decision 0251), however often handlers report: a report
 * only replaces the job's unwritten value, and a timer sends the latest value of every job that
 * has one. The first report after a quiet interval goes at once (on the next timer turn), so a
 * handler that reports now and then is seen without delay, and one that reports a thousand
 * times a second costs a few statements a second.
 *
 * A write is fenced like a renewal; a job it leaves out is no longer its holder's, and the
 * report's `onRefused` says so (the holder decides whether that still matters: a job whose
 * outcome went out meanwhile is refused for a good reason). A value not yet written when the
 * job's outcome goes out is dropped (`forget`), or written first (`flushJob`), as the holder
 * chooses. A failed write puts back what no newer report replaced, for the next turn.
 */
import type { Clock, Timer } from '../core/clock.js';
import type { JobProgress } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import type { JobLeaseRef } from '../engine/jobs.js';

/** How often a worker (or pull consumer) writes its jobs' progress at most: 4 statements a second. */
export const PROGRESS_INTERVAL_MS = 250;

export interface ProgressReport {
  readonly ref: JobLeaseRef;
  readonly progress: JobProgress;
  /** The write came back without the job: it is no longer the holder's. */
  readonly onRefused: () => void;
}

export interface ProgressWriterOptions {
  engine: Engine;
  /** The holder every write names (the worker's or the receiver's id). */
  ownerId: string;
  clock: Clock;
  /** Fewest ms between the starts of two writes. */
  intervalMs: number;
  onError: (error: unknown) => void;
}

export class ProgressWriter {
  private readonly unwritten = new Map<number, ProgressReport>();
  /** The reports of the writes in flight, by job, until they return or the job is forgotten. */
  private readonly sending = new Map<number, ProgressReport>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: Timer | undefined;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private stopped = false;

  constructor(private readonly o: ProgressWriterOptions) {}

  /** Records the job's latest progress; it is written within the interval. */
  report(report: ProgressReport): void {
    if (this.stopped) return;
    this.unwritten.set(report.ref.id, report);
    this.schedule();
  }

  /** The job's outcome is on its way: a value not yet written is dropped. */
  forget(id: number): void {
    this.unwritten.delete(id);
    this.sending.delete(id);
  }

  /**
   * Writes the job's unwritten value now, after a write in flight that carries an older value
   * of it, so it is stored before the outcome that follows. Resolves when written or
   * refused; a failed write is reported and not retried (the outcome is about to end the attempt).
   */
  async flushJob(id: number): Promise<void> {
    // A job that never reported, or whose value is written, waits for nobody.
    while (this.sending.has(id)) await Promise.all(this.inFlight);
    const report = this.unwritten.get(id);
    if (!report) return;
    this.unwritten.delete(id);
    await this.send([report], false);
  }

  /** Drops every unwritten value and waits for the writes in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.unwritten.clear();
    this.sending.clear();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private schedule(): void {
    // A write in flight schedules the next turn when it returns: a slow database gets one
    // statement at a time, each carrying the latest values.
    if (this.timer || this.inFlight.size > 0 || this.unwritten.size === 0) return;
    const wait = this.lastSentAt + this.o.intervalMs - this.o.clock.monotonic();
    this.timer = this.o.clock.setTimer(Math.max(0, wait), () => {
      this.timer = undefined;
      void this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    if (this.unwritten.size === 0) return;
    const batch = [...this.unwritten.values()];
    this.unwritten.clear();
    await this.send(batch, true);
  }

  private async send(batch: readonly ProgressReport[], retry: boolean): Promise<void> {
    this.lastSentAt = this.o.clock.monotonic();
    const write = this.write(batch, retry);
    this.inFlight.add(write);
    try {
      await write;
    } finally {
      this.inFlight.delete(write);
      if (!this.stopped) this.schedule();
    }
  }

  private async write(batch: readonly ProgressReport[], retry: boolean): Promise<void> {
    for (const r of batch) this.sending.set(r.ref.id, r);
    try {
      const accepted = new Set(
        await this.o.engine.jobProgress({
          workerId: this.o.ownerId,
          jobs: batch.map((r) => ({ ...r.ref, progress: r.progress })),
        }),
      );
      for (const r of batch) if (!accepted.has(r.ref.id)) r.onRefused();
    } catch (error) {
      this.o.onError(error);
      // Back for the next turn, unless a newer report or the job's outcome came meanwhile.
      if (retry && !this.stopped)
        for (const r of batch)
          if (this.sending.get(r.ref.id) === r && !this.unwritten.has(r.ref.id))
            this.unwritten.set(r.ref.id, r);
    } finally {
      for (const r of batch) if (this.sending.get(r.ref.id) === r) this.sending.delete(r.ref.id);
    }
  }
}
