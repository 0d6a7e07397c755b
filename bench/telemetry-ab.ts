/**
 * What observability costs the burn-down (decisions 0258 and 0260), part by part: the fastest
 * keeping shape (concurrency 1000, claim batch 500) plain, with the library's Prometheus metrics
 * (`lh.metrics()`), with only the AsyncLocalStorage context manager, with it entered once before
 * the drain (`activated`: on Node 20 that switches promise hooks on for the process, as any
 * instrumented server's first request does; decision 0271), with leasehold's tracing
 * (and the context manager), the same with no trace sampled (`unsampled`: a ratio sampler at 0,
 * what a job outside any sampled trace costs; a ratio r costs about unsampled + r × (tracing -
 * unsampled)), with its OpenTelemetry metrics alone, and with all of OpenTelemetry; in rotating
 * order, the same job count each run. Prints each run and the median ratio of each mode to
 * plain, of the rate and of the process's CPU time per job.
 *
 * Every run is a process of its own (lib/isolated-drain.ts), which first drains a tenth of the
 * jobs untimed. Runs of several modes in one process measured each other: the first paid for
 * compiling the library's hot paths (25–30% slower), and after one OpenTelemetry run the
 * Prometheus mode's CPU a job rose from 1.007 to 1.083 of plain's (presumably code paths the two
 * share, grown polymorphic). A process runs one configuration, as an application does.
 *
 *   npx tsx bench/telemetry-ab.ts [jobs=20000] [rounds=5] [shape=fastest|defaults]
 */
import { startBenchDatabase } from './lib/database.js';
import { isolatedDrain } from './lib/isolated-drain.js';
import { OBSERVABILITY_MODES, type ObservabilityModeName } from './lib/observability-modes.js';

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
const names = Object.keys(OBSERVABILITY_MODES) as ObservabilityModeName[];

const db = await startBenchDatabase();
try {
  const rates = new Map<string, number[]>(names.map((n) => [n, []]));
  const cpus = new Map<string, number[]>(names.map((n) => [n, []]));
  for (let round = 1; round <= rounds; round++) {
    // Rotate the order, so a drift of the machine falls on every mode.
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const mode of order) {
      const { rate, cpuPerJob } = await isolatedDrain({
        url: db.url,
        jobs,
        ...shape,
        mode,
        limitMs: 600_000,
      });
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
