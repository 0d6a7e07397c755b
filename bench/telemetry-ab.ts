/**
 * What observability costs the burn-down (decisions 0258 and 0260), part by part: the fastest
 * keeping shape (concurrency 1000, claim batch 500) plain, with the library's Prometheus metrics
 * (`lh.metrics()`), with only the AsyncLocalStorage context manager, with leasehold's tracing
 * (and the context manager), the same with no trace sampled (`unsampled`: a ratio sampler at 0,
 * what a job outside any sampled trace costs; a ratio r costs about unsampled + r × (tracing -
 * unsampled)), with its OpenTelemetry metrics alone, and with all of OpenTelemetry; in rotating
 * order, the same job count each run. Prints each run and the median ratio of each mode to
 * plain, of the rate and of the process's CPU time per job.
 *
 * Every run is a process of its own, which first drains a tenth of the jobs untimed. Runs of
 * several modes in one process measured each other: the first paid for compiling the library's
 * hot paths (25–30% slower), and after one OpenTelemetry run the Prometheus mode's CPU a job
 * rose from 1.007 to 1.083 of plain's (presumably code paths the two share, grown polymorphic). A process
 * runs one configuration, as an application does.
 *
 *   npx tsx bench/telemetry-ab.ts [jobs=20000] [rounds=5] [shape=fastest|defaults]
 *
 * (A fifth argument, a mode, is the child's: one run against BENCH_DATABASE_URL.)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { checkpoint, startBenchDatabase } from './lib/database.js';
import type { TelemetrySetup } from './lib/telemetry.js';
import { leaseholdDrain } from './scenarios/queue.js';

const jobs = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 5);
/**
 * `fastest` (the default): the keeping shape the burn-down's cost ratios use. `defaults`: the
 * worker's default concurrency and claim batch (10 and 10), where a job's own budget is larger.
 */
const SHAPES = {
  fastest: { concurrency: 1_000, maxClaimBatch: 500 },
  defaults: { concurrency: 10, maxClaimBatch: 10 },
} as const;
const shapeName = (process.argv[4] ?? 'fastest') as keyof typeof SHAPES;
if (!(shapeName in SHAPES)) {
  console.error(`telemetry-ab: shape must be ${Object.keys(SHAPES).join(' or ')}`);
  process.exit(1);
}
const shape = SHAPES[shapeName];
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const otel = (telemetry: TelemetrySetup) => ({ telemetry });
const MODES: Record<string, { metrics?: boolean; telemetry?: TelemetrySetup }> = {
  plain: {},
  prometheus: { metrics: true },
  context: otel({ contextManager: true, tracing: false, metrics: false }),
  tracing: otel({ contextManager: true, tracing: true, metrics: false }),
  unsampled: otel({ contextManager: true, tracing: true, metrics: false, sampleRatio: 0 }),
  metrics: otel({ contextManager: false, tracing: false, metrics: true }),
  full: otel({ contextManager: true, tracing: true, metrics: true }),
};
const names = Object.keys(MODES);

/** One run, in a process of its own: a warm-up drain, then the timed one; prints its figures. */
async function runOne(url: string, mode: string): Promise<void> {
  const options = { ...shape, ...MODES[mode] };
  await leaseholdDrain(url, Math.ceil(jobs / 10), options, 600_000);
  await checkpoint(url);
  const cpuBefore = process.cpuUsage();
  const { rate } = await leaseholdDrain(url, jobs, options, 600_000);
  const cpu = process.cpuUsage(cpuBefore);
  // This process's CPU (enqueue and drain; PostgreSQL's is not in it), per job.
  console.log(JSON.stringify({ rate, cpuPerJob: (cpu.user + cpu.system) / jobs }));
}

/** Runs `mode` in a child process against the database at `url`. */
async function inChild(url: string, mode: string): Promise<{ rate: number; cpuPerJob: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), String(jobs), '1', shapeName, mode],
    { env: { ...process.env, BENCH_DATABASE_URL: url }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`telemetry-ab: the ${mode} run exited with ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1)!) as { rate: number; cpuPerJob: number };
}

const only = process.argv[5];
if (only !== undefined) {
  const url = process.env.BENCH_DATABASE_URL;
  if (!url || !(only in MODES)) throw new Error(`telemetry-ab: no such run: ${only}`);
  await runOne(url, only);
  process.exit(0);
}

const db = await startBenchDatabase();
try {
  const rates = new Map<string, number[]>(names.map((n) => [n, []]));
  const cpus = new Map<string, number[]>(names.map((n) => [n, []]));
  for (let round = 1; round <= rounds; round++) {
    // Rotate the order, so a drift of the machine falls on every mode.
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const mode of order) {
      const { rate, cpuPerJob } = await inChild(db.url, mode);
      rates.get(mode)!.push(rate);
      cpus.get(mode)!.push(cpuPerJob);
      console.log(
        `round ${round} ${mode.padEnd(10)} ${Math.round(rate)} jobs/s, ${cpuPerJob.toFixed(1)} µs CPU a job`,
      );
    }
  }
  const plain = rates.get('plain')!;
  const plainCpu = cpus.get('plain')!;
  for (const mode of names) {
    const ratios = rates.get(mode)!.map((r, i) => r / plain[i]!);
    const cpuRatios = cpus.get(mode)!.map((c, i) => c / plainCpu[i]!);
    console.log(
      `${mode.padEnd(10)} median ${Math.round(median(rates.get(mode)!))} jobs/s; ÷ plain per round ` +
        `${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(3)}; ` +
        `CPU a job ${median(cpus.get(mode)!).toFixed(1)} µs, ÷ plain median ${median(cpuRatios).toFixed(3)}`,
    );
  }
} finally {
  await db.stop();
}
