/**
 * Driving background loops that run on a ManualClock. A worker's flush window, polling and
 * renewals only fire when the clock moves, while its database round trips take real time; so
 * we move the clock in small steps and give real I/O a moment between steps, until the
 * condition holds or a real-time deadline passes.
 */
import type { ManualClock } from '../../src/core/clock.js';

export async function pumpUntil<T>(
  clock: ManualClock,
  what: string,
  condition: () => T | Promise<T>,
  { stepMs = 5, timeoutMs = 30_000 }: { stepMs?: number; timeoutMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms (real time) waiting for ${what}`);
    await clock.advance(stepMs);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * Moves the clock by `totalMs` in steps, letting real I/O settle between them. With `settled`,
 * each step first waits (in real time) until it holds, e.g. until no renewal is in flight: the
 * manual clock must not outrun a database round trip that a slow machine takes its time over.
 */
export async function pumpFor(
  clock: ManualClock,
  totalMs: number,
  stepMs = 5,
  settled?: () => boolean,
): Promise<void> {
  for (let moved = 0; moved < totalMs; moved += stepMs) {
    if (settled) await waitReal('in-flight work to settle', settled);
    await clock.advance(Math.min(stepMs, totalMs - moved));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function waitReal(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
