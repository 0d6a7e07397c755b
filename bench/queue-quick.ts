/**
 * `npx tsx bench/queue-quick.ts [jobs]`: the queue's quick figures on the embedded database
 * (default durability) or BENCH_DATABASE_URL: a burn-down of 50,000 no-op jobs, and the idle
 * enqueue-to-start latency with notifications and by polling alone. The comparison against
 * peers lives in the main benchmark; this is the figure a change to the queue is checked with.
 */
import { startBenchDatabase } from './lib/database.js';
import { idleLatency } from './lib/idle-latency.js';
import { leaseholdBurnDown, leaseholdIdleSetup } from './scenarios/queue.js';

const jobs = Number(process.argv[2] ?? 50_000);
const db = await startBenchDatabase();
console.log(
  `PostgreSQL ${db.settings['server_version']}, fsync=${db.settings['fsync']}, synchronous_commit=${db.settings['synchronous_commit']}`,
);
try {
  const rate = await leaseholdBurnDown(db.url, jobs, { concurrency: 100, maxClaimBatch: 100 });
  console.log(
    `burn-down of ${jobs} no-op jobs (1 worker, concurrency 100): ${Math.round(rate)} jobs/s`,
  );
  for (const notifications of [true, false]) {
    const l = await idleLatency(leaseholdIdleSetup(db.url, notifications), 50);
    console.log(
      `idle enqueue->start latency, ${notifications ? 'LISTEN/NOTIFY' : 'polling every 100 ms'}: ` +
        `p50 ${l.p50.toFixed(1)} ms, p95 ${l.p95.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms`,
    );
  }
} finally {
  await db.stop();
}
