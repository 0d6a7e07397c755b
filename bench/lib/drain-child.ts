/**
 * One burn-down in a process of its own (isolated-drain.ts starts it): an untimed warm-up drain
 * of a tenth of the jobs, then the timed one, against BENCH_DATABASE_URL. Prints one JSON line,
 * the drain's result and this process's CPU a job (enqueue included).
 *
 *   drain-child.ts <jobs> <concurrency> <claim batch> <mode> <limit ms>
 */
import { checkpoint } from './database.js';
import { OBSERVABILITY_MODES, isObservabilityMode } from './observability-modes.js';
import { leaseholdDrain } from '../scenarios/queue.js';

const [jobs, concurrency, maxClaimBatch, mode, limitMs] = process.argv.slice(2);
const url = process.env.BENCH_DATABASE_URL;
if (!url || mode === undefined || !isObservabilityMode(mode))
  throw new Error(`drain-child: bad arguments ${process.argv.slice(2).join(' ')}`);
const n = Number(jobs);
const options = {
  concurrency: Number(concurrency),
  maxClaimBatch: Number(maxClaimBatch),
  ...OBSERVABILITY_MODES[mode],
};
await leaseholdDrain(url, Math.ceil(n / 10), options, Number(limitMs));
await checkpoint(url);
const cpuBefore = process.cpuUsage();
const result = await leaseholdDrain(url, n, options, Number(limitMs));
const cpu = process.cpuUsage(cpuBefore);
console.log(JSON.stringify({ ...result, cpuPerJob: (cpu.user + cpu.system) / n }));
