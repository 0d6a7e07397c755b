/**
 * A leasehold burn-down in a child process of its own (drain-child.ts), for the measurements of
 * what observability costs: an application runs one configuration in its process, and modes
 * run one after another in one process measured each other (decision 0260, "Measured again").
 */
import { startChild } from './child.js';
import type { DrainResult } from './countdown.js';
import type { ObservabilityModeName } from './observability-modes.js';

export interface IsolatedDrain {
  url: string;
  jobs: number;
  concurrency: number;
  maxClaimBatch: number;
  mode: ObservabilityModeName;
  limitMs: number;
}

/** The drain's result, and the child's CPU a job in µs (enqueue included). */
export async function isolatedDrain(
  o: IsolatedDrain,
): Promise<DrainResult & { cpuPerJob: number }> {
  const args = [o.jobs, o.concurrency, o.maxClaimBatch, o.mode, o.limitMs].map(String);
  const child = startChild('bench/lib/drain-child.ts', args, { BENCH_DATABASE_URL: o.url });
  try {
    // Its warm-up and its timed drain each stop at the limit; the rest is a liveness bound.
    const [line] = await child.waitForLine(/^\{.*\}$/, 2 * o.limitMs + 180_000);
    return JSON.parse(line) as DrainResult & { cpuPerJob: number };
  } finally {
    await child.stop();
  }
}
