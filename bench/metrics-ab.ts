/**
 * What the library's Prometheus metrics cost the burn-down (decision 0258): the fastest keeping
 * shape (concurrency 1000, claim batch 500) with `lh.metrics()` off and on, alternating, the
 * same job count each run. Prints each run and the median ratio on ÷ off.
 *
 *   npx tsx bench/metrics-ab.ts [jobs=20000] [rounds=5]
 */
import { checkpoint, startBenchDatabase } from './lib/database.js';
import { leaseholdDrain } from './scenarios/queue.js';

const jobs = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 5);
const shape = { concurrency: 1_000, maxClaimBatch: 500 };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const db = await startBenchDatabase();
try {
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first, so a drift of the machine falls on both sides.
    const order = round % 2 ? [false, true] : [true, false];
    for (const metrics of order) {
      await checkpoint(db.url);
      const { rate } = await leaseholdDrain(db.url, jobs, { ...shape, metrics }, 600_000);
      (metrics ? on : off).push(rate);
      console.log(`round ${round} metrics ${metrics ? 'on ' : 'off'}: ${Math.round(rate)} jobs/s`);
    }
  }
  const ratios = on.map((r, i) => r / off[i]!);
  console.log(
    `median off ${Math.round(median(off))} jobs/s, on ${Math.round(median(on))} jobs/s; ` +
      `on ÷ off per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(3)}`,
  );
} finally {
  await db.stop();
}
