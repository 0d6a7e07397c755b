/** Waiting on conditions and events instead of sleeping. */

/**
 * Liveness bound of the waits below: how long a test waits for something that must happen before
 * it fails. Generous on purpose (a wait ends as soon as its condition holds, so a passing test
 * is no slower): the CI machine is a loaded two-core VM, where a 3 s bound has been overrun.
 */
export const LIVENESS_MS = 30_000;

/** Polls `condition` every `intervalMs` until it is truthy; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  condition: () => T | Promise<T>,
  { timeoutMs = LIVENESS_MS, intervalMs = 10 } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A promise with its resolver exposed: tests await callbacks through it. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Rejects if `promise` does not settle within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]);
}
