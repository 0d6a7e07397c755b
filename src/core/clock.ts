/**
 * Time, made injectable. Two readings with different jobs:
 * - `now()` is wall time. Engines that have no database clock of their own (the memory engine)
 *   decide validity with it; a PostgresEngine given a clock pins the database's `now` to it,
 *   which is how the conformance suite drives both engines through the same timeline.
 * - `monotonic()` never jumps; a holder measures its trust deadline with it.
 * `setTimer` is how every loop schedules itself, so a ManualClock can drive them in tests.
 */
export interface Timer {
  cancel(): void;
  /**
   * Lets the process exit while this timer is pending (Node's `unref`), for a timer that only
   * warns work which keeps the process alive by itself. Clocks that hold no process (a
   * ManualClock) leave it out.
   */
  unref?(): void;
}

export interface Clock {
  now(): Date;
  /** Milliseconds from an arbitrary origin; never goes backwards. */
  monotonic(): number;
  setTimer(delayMs: number, callback: () => void): Timer;
}

export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }

  monotonic(): number {
    return performance.now();
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const handle = setTimeout(callback, Math.max(0, delayMs));
    return {
      cancel: () => clearTimeout(handle),
      unref: () => {
        handle.unref();
      },
    };
  }
}

export const systemClock: Clock = new SystemClock();

interface PendingTimer {
  readonly dueAt: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. `advance(ms)` runs every timer that falls due, in due
 * order, with `now()` reading each timer's due time while it runs, exactly as a real clock would.
 * Wall and monotonic time move together unless `jumpWallClock()` simulates an NTP step.
 */
export class ManualClock implements Clock {
  private monotonicMs = 0;
  private wallOffsetMs: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start: Date = new Date('2030-01-01T00:00:00.000Z')) {
    this.wallOffsetMs = start.getTime();
  }

  now(): Date {
    return new Date(this.wallOffsetMs + this.monotonicMs);
  }

  monotonic(): number {
    return this.monotonicMs;
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const timer: PendingTimer = {
      dueAt: this.monotonicMs + Math.max(0, delayMs),
      seq: this.seq++,
      callback,
      cancelled: false,
    };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward, firing due timers one by one (awaiting microtasks between them). */
  async advance(ms: number): Promise<void> {
    const target = this.monotonicMs + ms;
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.monotonicMs = next.dueAt;
      this.timers = this.timers.filter((t) => t !== next);
      next.callback();
      await flushMicrotasks();
    }
    this.monotonicMs = target;
    await flushMicrotasks();
  }

  /** Steps the wall clock without moving monotonic time (an NTP correction). */
  jumpWallClock(ms: number): void {
    this.wallOffsetMs += ms;
  }

  /** Timers not yet fired nor cancelled; handy to assert that a loop stopped. */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.cancelled || t.dueAt > limit) continue;
      if (!best || t.dueAt < best.dueAt || (t.dueAt === best.dueAt && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets promise chains started by a timer callback settle before time moves on. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Resolves after `ms` on the given clock, or rejects when the signal aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A wait that ends at the first of: `ms` on the clock, the signal aborting, or `wake()`. */
export interface Nap {
  /** Resolves (never rejects) when the nap ends, whatever ended it. */
  readonly done: Promise<void>;
  /** Ends the nap now; harmless once it has ended. */
  wake(): void;
}

/**
 * Starts a nap: for waits that poll on a timer and are cut short by a notification (`wake`) or
 * by the caller's signal (the caller checks `signal.aborted` afterwards).
 */
export function nap(clock: Clock, ms: number, signal?: AbortSignal): Nap {
  let wake!: () => void;
  const done = new Promise<void>((resolve) => {
    const finish = (): void => {
      timer.cancel();
      signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = clock.setTimer(ms, finish);
    signal?.addEventListener('abort', finish, { once: true });
    wake = finish;
    if (signal?.aborted) finish();
  });
  return { done, wake };
}
