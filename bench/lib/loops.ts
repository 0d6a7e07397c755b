/**
 * Concurrent callers in a loop for a fixed time: the load of the lease scenarios and of single
 * enqueues. Each caller first runs a short untimed warm-up (connections opened, statements
 * prepared, code compiled by the JIT: a service in a fresh process needs it most), then as many
 * iterations as fit in the window. A time window rather than a count keeps a run's length
 * fixed on a busy machine.
 */
const WARM_UP_ITERATIONS = 20;

/** Operations per second over the timed window; `body(caller, i)` is one operation. */
export async function timedLoops(
  callers: number,
  seconds: number,
  body: (caller: number, i: number) => Promise<unknown>,
): Promise<number> {
  let i = 0;
  const warmUntil = performance.now() + Math.min(1_000, seconds * 200);
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let k = 0; k === 0 || (k < WARM_UP_ITERATIONS && performance.now() < warmUntil); k++)
        await body(caller, i++);
    }),
  );
  let count = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (performance.now() < deadline) {
        await body(caller, i++);
        count++;
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}
