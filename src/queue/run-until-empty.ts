/**
 * `worker.runUntilEmpty()` (decision 0259): a worker that runs what is ready and then stops, for
 * cron-triggered functions, scripts and tests. "Empty" is a claim that found nothing while
 * nothing was in flight: each time the last job in hand settles the worker is nudged to claim
 * at once (rather than wait out its poll interval), so a drained queue is seen one claim after
 * its last job. Jobs scheduled for later, or in a retry backoff, are not ready: they are left.
 */
import type { Clock } from '../core/clock.js';
import { toMilliseconds, type Duration } from '../core/duration.js';
import type { TypedEvents } from '../runtime/events.js';
import type { WorkerEvents } from './worker-events.js';

/** What a run until empty did. */
export interface RunUntilEmptyResult {
  readonly completed: number;
  /** Attempts that failed and were scheduled again (retry policy). */
  readonly retried: number;
  /** Attempts that failed for good: dead-lettered. */
  readonly dead: number;
  /** Jobs whose lease this worker lost (expired, cancelled, taken over). */
  readonly lost: number;
  /** Jobs whose handler called `ctx.sleep`: pending again until their wake-up. */
  readonly slept: number;
  /** Jobs still running at the timeout, handed back (pending again, attempt given back). */
  readonly handedBack: number;
  /** True when it stopped because nothing was ready; false when the timeout stopped it. */
  readonly empty: boolean;
}

/** The default bound of a run: a scheduled function's budget is usually a minute or more. */
export const RUN_UNTIL_EMPTY_TIMEOUT_MS = 60_000;

/** The parts of a Worker a run until empty drives. */
export interface DrainableWorker {
  readonly inFlight: number;
  readonly events: TypedEvents<WorkerEvents>;
  start(): Promise<void>;
  drain(options: { timeout?: Duration }): Promise<{ handedBack: number }>;
}

export async function runUntilEmpty(
  worker: DrainableWorker,
  nudge: () => void,
  clock: Clock,
  options: { timeout?: Duration },
): Promise<RunUntilEmptyResult> {
  const timeoutMs = toMilliseconds('timeout', options.timeout ?? RUN_UNTIL_EMPTY_TIMEOUT_MS, {
    min: 0,
  });
  const counts = { completed: 0, retried: 0, dead: 0, lost: 0, slept: 0 };
  let stop!: (empty: boolean) => void;
  const stopped = new Promise<boolean>((resolve) => (stop = resolve));
  // After the settling job has left the worker's hands (the event comes just before): if it was
  // the last one, claim now.
  const settled = (): void =>
    queueMicrotask(() => {
      if (worker.inFlight === 0) nudge();
    });
  const offs = [
    worker.events.on('claim:answered', ({ taken }) => {
      if (taken === 0 && worker.inFlight === 0) stop(true);
    }),
    worker.events.on('job:completed', () => {
      counts.completed++;
      settled();
    }),
    worker.events.on('job:failed', ({ outcome }) => {
      if (outcome === 'retried') counts.retried++;
      else if (outcome === 'dead') counts.dead++;
      settled();
    }),
    worker.events.on('job:lost', () => counts.lost++),
    worker.events.on('job:slept', () => {
      counts.slept++;
      settled();
    }),
  ];
  const timer = clock.setTimer(timeoutMs, () => stop(false));
  try {
    await worker.start();
    const empty = await stopped;
    // Empty: nothing is running, the drain only writes what is pending and deregisters. At the
    // timeout: what still runs is handed back now.
    const { handedBack } = await worker.drain({ timeout: 0 });
    return { ...counts, handedBack, empty };
  } finally {
    timer.cancel();
    for (const off of offs) off();
  }
}
