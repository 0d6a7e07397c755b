/**
 * A leasehold burn-down in a child process of its own (drain-child.ts), for the measurements of
 * what observability costs: an application runs one configuration in its process, and modes
 * run one after another in one process measured each other (decision 0260, "Measured again").
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { DrainResult } from './countdown.js';
import type { ObservabilityModeName } from './observability-modes.js';

const CHILD = fileURLToPath(new URL('./drain-child.ts', import.meta.url));

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
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    env: { ...process.env, BENCH_DATABASE_URL: o.url, LEASEHOLD_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`isolated drain (${o.mode}) exited with ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as DrainResult & { cpuPerJob: number };
}
