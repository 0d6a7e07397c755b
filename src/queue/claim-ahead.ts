/**
 * The jobs a worker claimed ahead of a free slot (decision 0277), oldest first.
 *
 * A worker whose handlers finish faster than a claim's round trip spends most of its time
 * waiting for claims: at concurrency 1 every job costed a whole round trip, with its WAL flush,
 * before it could start. So while its recent handlers are shorter than its recent claims, a
 * worker may hold up to one batch (its concurrency, at most its claim batch) beyond its slots:
 * the next job is already in hand when a slot frees, and a claim for the one after goes out
 * at once. When handlers are long, nothing is claimed ahead, and a worker still never holds a
 * job it cannot start.
 *
 * A job waiting here is claimed (its lease is renewed with the others, it counts as processing
 * in the database) but has not started: its handler, its timeout and its `job:started` wait for
 * a slot. If the oldest of them has waited `AHEAD_WAIT_MS` (a handler ran long after all), all
 * of them are given back to the queue at once, their attempt given back, so that another
 * worker takes them; the wait also counts as a handler's duration, so claiming ahead stops
 * until handlers are short again.
 */
import type { Clock, Timer } from '../core/clock.js';
import type { JobRun } from './job-run.js';

/** The longest a job claimed ahead waits for a slot before it is given back. */
export const AHEAD_WAIT_MS = 100;
/** The fewest jobs a worker may hold ahead, whatever its concurrency. */
export const AHEAD_AT_LEAST = 16;
/** The weight of each new duration in the running averages. */
const EWMA_WEIGHT = 0.2;

export interface ClaimAheadOptions {
  /** False: never claim ahead (the worker's `claimAhead: false`). */
  readonly enabled: boolean;
  /** The most jobs held ahead of the slots. */
  readonly most: number;
  readonly clock: Clock;
  /** The jobs that waited too long, taken out of the line: give them back. */
  readonly stalled: (runs: JobRun[]) => void;
}

export class ClaimAhead {
  private runs: JobRun[] = [];
  /** When each of `runs` arrived (monotonic). */
  private arrivals: number[] = [];
  /** The first of `runs` still waiting (entries before it were taken). */
  private head = 0;
  /** Running averages of the handlers' and the claims' durations, ms; undefined until seen. */
  private handlerMs: number | undefined;
  private claimMs: number | undefined;
  private timer: Timer | undefined;
  private closed = false;

  constructor(private readonly o: ClaimAheadOptions) {}

  /** Jobs waiting for a slot. */
  get length(): number {
    return this.runs.length - this.head;
  }

  /**
   * How many more jobs may be claimed ahead now; negative when more are held than handlers'
   * durations now allow (claim nothing until they have started).
   */
  get room(): number {
    return this.allowed() - this.length;
  }

  /** A handler ran `ms`. */
  handlerTook(ms: number): void {
    this.handlerMs = average(this.handlerMs, ms);
  }

  /** A claim's answer came `ms` after it was sent. */
  claimTook(ms: number): void {
    this.claimMs = average(this.claimMs, ms);
  }

  push(run: JobRun): void {
    this.runs.push(run);
    this.arrivals.push(this.o.clock.monotonic());
    if (!this.timer) this.armTimer(AHEAD_WAIT_MS);
  }

  /** The oldest waiting job, taken out of the line; undefined when none waits. */
  shift(): JobRun | undefined {
    if (this.head >= this.runs.length) return undefined;
    const run = this.runs[this.head]!;
    this.head++;
    // Compact now and then rather than shift an array per job.
    if (this.head >= 64 && this.head * 2 >= this.runs.length) {
      this.runs = this.runs.slice(this.head);
      this.arrivals = this.arrivals.slice(this.head);
      this.head = 0;
    }
    if (this.length === 0) this.cancelTimer();
    return run;
  }

  /** Every waiting job, taken out of the line; nothing is claimed ahead any more (a drain). */
  close(): JobRun[] {
    this.closed = true;
    return this.takeAll();
  }

  private allowed(): number {
    if (!this.o.enabled || this.closed) return 0;
    const { handlerMs, claimMs } = this;
    if (handlerMs === undefined || claimMs === undefined || handlerMs >= claimMs) return 0;
    return this.o.most;
  }

  private takeAll(): JobRun[] {
    const runs = this.runs.slice(this.head);
    this.runs = [];
    this.arrivals = [];
    this.head = 0;
    this.cancelTimer();
    return runs;
  }

  private armTimer(ms: number): void {
    this.timer = this.o.clock.setTimer(ms, () => this.check());
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** The timer: if the oldest job has waited its time, give every waiting job back. */
  private check(): void {
    this.timer = undefined;
    if (this.length === 0) return;
    const waited = this.o.clock.monotonic() - this.arrivals[this.head]!;
    if (waited < AHEAD_WAIT_MS) return this.armTimer(AHEAD_WAIT_MS - waited);
    // A slot stayed taken this long: as long a handler as any the average should know of.
    this.handlerMs = Math.max(this.handlerMs ?? 0, waited);
    this.o.stalled(this.takeAll());
  }
}

function average(current: number | undefined, sample: number): number {
  return current === undefined ? sample : current + EWMA_WEIGHT * (sample - current);
}
