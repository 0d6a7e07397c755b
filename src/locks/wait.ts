/**
 * How a blocking `lock()` waits.
 *
 * Advisory and session locks wait inside PostgreSQL (the dedicated connection sits in the
 * server's lock queue and is granted the instant the holder lets go), so for them this module
 * only supplies the wait scope: the timeout and the caller's signal folded into one signal.
 *
 * Lease locks are rows, and nothing queues for a row that is merely "not expired yet", so a
 * waiter tries, and between tries it sleeps until the first of:
 * - a `locks` notification naming the lock (the releasing statement sends it inline), or the
 *   listener reconnecting (notifications may have been lost meanwhile);
 * - the engine's `retryAfterMs`, which is exact when the term in the way has already ended
 *   (its quiet period, lock delay or lockAtLeast is running: nobody can take it earlier), and
 *   an upper bound when it is live (it frees then unless renewed);
 * - a full-jitter backoff capped at `pollEvery`, the baseline that works with every NOTIFY lost
 *   (a holder that crashed sends none).
 * A waiter therefore costs at most one statement per backoff step, and a herd of waiters woken
 * by one release spreads out again on its next miss.
 */
import { backoffDelay, type BackoffPolicy } from '../core/backoff.js';
import type { Clock, Timer } from '../core/clock.js';
import { formatDuration, toMilliseconds, type Duration } from '../core/duration.js';
import { InvalidArgumentError, TimeoutError } from '../core/errors.js';
import type { Engine } from '../engine/engine.js';
import { LOCKS_TOPIC } from '../engine/locks.js';

/** The first sleep between tries is up to this long; later ones double up to `pollEvery`. */
export const POLL_BASE_MS = 50;
/** Default cap of the polling backoff: a waiter that hears nothing tries about once a second. */
export const DEFAULT_POLL_EVERY_MS = 2_000;

/** How long a blocking `lock()` may wait, and what cancels it. */
export interface LockOptions {
  /** Give up after this long (e.g. `"5s"`); rejects with a TimeoutError (code `timeout`). */
  timeout?: Duration;
  /** Cancels the wait; the promise rejects with `signal.reason`. */
  signal?: AbortSignal;
}

export interface WaitScope {
  /** Aborts on the caller's signal (with its reason) or at the timeout (with a TimeoutError). */
  readonly signal: AbortSignal;
  /** Stops the timeout timer and detaches from the caller's signal. */
  dispose(): void;
}

/** Validates `{ timeout, signal }` and folds them into one signal. */
export function waitScope(clock: Clock, what: string, options: LockOptions): WaitScope {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'must be an object');
  const timeoutMs =
    options.timeout === undefined
      ? undefined
      : toMilliseconds('timeout', options.timeout, { min: 0 });
  const outer = options.signal;
  if (outer !== undefined && !(outer instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'must be an AbortSignal');

  const controller = new AbortController();
  const onAbort = (): void => controller.abort(outer?.reason);
  let timer: Timer | undefined;
  if (outer?.aborted) onAbort();
  else {
    outer?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = clock.setTimer(timeoutMs, () =>
        controller.abort(
          new TimeoutError(`${what} was not acquired within ${formatDuration(timeoutMs)}`),
        ),
      );
    }
  }
  return {
    signal: controller.signal,
    dispose: () => {
      timer?.cancel();
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Fans the engine's `locks` notifications out to the waiters of each lock name. It subscribes
 * the first time a waiter has to sleep and then stays subscribed for the life of the engine:
 * the engine carries every topic on one listener connection, and re-subscribing for every wait
 * would open and close that connection over and over.
 */
export class LockWakeups {
  private readonly waiters = new Map<string, Set<() => void>>();
  private subscribed: Promise<void> | undefined;

  constructor(private readonly engine: Engine) {}

  /**
   * Calls `wake` on every release of `name` (and after a listener reconnect) until `unwatch()`.
   * `ready` resolves once notifications flow, or once it is known they will not (then: poll).
   */
  watch(name: string, wake: () => void): { ready: Promise<void>; unwatch(): void } {
    let set = this.waiters.get(name);
    if (!set) this.waiters.set(name, (set = new Set()));
    set.add(wake);
    return {
      ready: this.subscribe(),
      unwatch: () => {
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(name) === set) this.waiters.delete(name);
      },
    };
  }

  private subscribe(): Promise<void> {
    if (!this.engine.capabilities.notifications) return Promise.resolve();
    this.subscribed ??= this.engine
      .notifyListen({
        topic: LOCKS_TOPIC,
        onNotify: (name) => this.wake(this.waiters.get(name)),
        onReconnect: () => {
          for (const set of this.waiters.values()) this.wake(set);
        },
      })
      .then(
        () => undefined,
        // Not listening is never fatal: the waiter polls. The engine keeps retrying the listener.
        () => undefined,
      );
    return this.subscribed;
  }

  private wake(set: Set<() => void> | undefined): void {
    for (const wake of [...(set ?? [])]) wake();
  }
}

/** One try: done with a value, or not yet, with the engine's hint of when to try again. */
export type TryOutcome<T> =
  | { readonly done: true; readonly value: T }
  | { readonly done: false; readonly retryAfterMs: number; readonly exact: boolean };

export interface PollParams<T> {
  clock: Clock;
  wakeups: LockWakeups;
  name: string;
  policy: BackoffPolicy;
  signal: AbortSignal;
  attempt(): Promise<TryOutcome<T>>;
  random?: () => number;
}

/**
 * Tries until `attempt` succeeds or `signal` aborts (then rejects with `signal.reason`). The
 * caller owns whatever a success returns, even one that raced with the abort.
 */
export async function pollUntilDone<T>(p: PollParams<T>): Promise<T> {
  let woken = false;
  let wakeSleeper: (() => void) | undefined;
  let watching: { unwatch(): void } | undefined;
  const wake = (): void => {
    woken = true;
    wakeSleeper?.();
  };
  try {
    for (let failures = 0; ;) {
      p.signal.throwIfAborted();
      woken = false;
      const outcome = await p.attempt();
      if (outcome.done) return outcome.value;
      p.signal.throwIfAborted();
      if (!watching) {
        // Listen only once a wait is needed, then try again at once: a release that happened
        // between the miss and the subscription sent its notification to nobody. A listener
        // that is slow to connect must not hold up a timeout or an abort.
        const watch = p.wakeups.watch(p.name, wake);
        watching = watch;
        await untilReadyOrAborted(watch.ready, p.signal);
        continue;
      }
      failures++;
      if (woken) continue;
      await sleepUntilWoken(
        p.clock,
        nextDelay(p, outcome, failures),
        p.signal,
        (resume) => (wakeSleeper = resume),
      );
      wakeSleeper = undefined;
    }
  } finally {
    watching?.unwatch();
  }
}

function nextDelay<T>(
  p: PollParams<T>,
  outcome: { retryAfterMs: number; exact: boolean },
  failures: number,
): number {
  const hint = Math.max(1, Math.ceil(outcome.retryAfterMs));
  if (outcome.exact) return hint;
  return Math.max(1, Math.min(hint, backoffDelay(p.policy, failures, p.random)));
}

function untilReadyOrAborted(ready: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void ready.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** Sleeps `ms` on the clock; returns early when woken, rejects with the reason on abort. */
function sleepUntilWoken(
  clock: Clock,
  ms: number,
  signal: AbortSignal,
  register: (resume: () => void) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      timer.cancel();
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(signal.reason);
    };
    const resume = (): void => {
      done();
      resolve();
    };
    const timer = clock.setTimer(ms, resume);
    signal.addEventListener('abort', onAbort, { once: true });
    register(resume);
  });
}
