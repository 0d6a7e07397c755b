/**
 * The one wall clock of a chaos run. `performance.timeOrigin + performance.now()` is the kernel's
 * wall clock at process start plus a monotonic offset: every process on this machine reads the
 * same timeline, and it cannot step backwards inside a process when NTP adjusts the clock.
 */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A process's monotonic reading (what the library's timers use) on the shared wall clock. */
export function monotonicToWall(monotonicMs: number): number {
  return performance.timeOrigin + monotonicMs;
}
