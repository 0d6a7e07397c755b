/**
 * How late this process's timers run: the test's own measure of how loaded the machine is.
 * A bound on "answered within X" is then checked as X plus the worst lateness seen meanwhile,
 * so a starved event loop (two cores, six suites) widens the bound instead of failing it.
 */
export interface LoopLag {
  /** The worst lateness of a timer seen so far, in ms. */
  readonly maxMs: number;
  stop(): void;
}

export function watchLoopLag(stepMs = 20): LoopLag {
  let maxMs = 0;
  let expected = performance.now() + stepMs;
  const timer = setInterval(() => {
    const now = performance.now();
    maxMs = Math.max(maxMs, now - expected);
    expected = now + stepMs;
  }, stepMs);
  timer.unref();
  return {
    get maxMs() {
      return maxMs;
    },
    stop: () => clearInterval(timer),
  };
}
