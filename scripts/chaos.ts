/**
 * `npm run chaos -- [--seed S] [--duration 30m] [--variant real|unguarded-complete|…]`: a
 * fault-injection run of every toolkit role against PostgreSQL, checked for safety violations.
 * Prints one summary line; on violations writes the history under test-results/chaos/ and exits 1.
 * DATABASE_URL: use that server (pg-restart and pg-crash are then skipped); otherwise an embedded one starts.
 * `--failover sync|async`: against a Patroni HA cluster instead (decision 0226), with the
 * failover, switchover and standby-lag faults; the summary then counts the promotions, and the
 * acknowledgements an asynchronous failover lost are printed as counted facts, not violations.
 * After the summary: what the linearizability checker covered, the limited queues' peaks
 * against their limits (limit-exceeded checker), and the formal model's check of
 * the design the run exercised (spec/leasehold.qnt, the run's replication; `--skip-model` skips it).
 */
import { parseArgs } from 'node:util';
import ms from 'ms';
import { FAILOVER_FAULT_TYPES, FAULT_TYPES } from '../test/chaos/history.js';
import { randomSeed } from '../test/chaos/random.js';
import { runChaos } from '../test/chaos/harness/run-chaos.js';
import {
  failoverLines,
  promotionCount,
  saveHistory,
  summaryLine,
  violationLines,
  workflowLine,
} from '../test/chaos/harness/report.js';
import { isVariant, VARIANTS } from '../test/chaos/variants/index.js';
import { checkDesign } from '../test/model/design-check.js';
import { linearizabilityLine } from '../test/chaos/checkers/linearizable.js';
import { limitsLine } from '../test/chaos/checkers/limit-exceeded.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    duration: { type: 'string', default: '60s' },
    variant: { type: 'string', default: 'real' },
    verbose: { type: 'boolean', default: false },
    volume: { type: 'string', default: 'high' },
    failover: { type: 'string' },
    // The formal model's check of the design runs after the chaos run unless skipped.
    'skip-model': { type: 'boolean', default: false },
  },
});
const seed = values.seed === undefined ? randomSeed() : Number(values.seed);
const durationMs = ms(values.duration as ms.StringValue);
const volumes = {
  // The shape of the short run in npm test: few terms and jobs, long ones.
  normal: {},
  // Volume for long runs: holders churn short terms on 4 shared resources (3 loops each) and
  // 10 short jobs are enqueued every 150 ms, on top of the long-lived roles.
  high: {
    churn: { resources: 4, loops: 3 },
    jobsPerEnqueue: 10,
    jobEveryMs: 150,
    jobWorkMs: [0, 30] as const,
    workerConcurrency: 8,
  },
};
const volume = values.volume as keyof typeof volumes;
if (
  !Number.isSafeInteger(seed) ||
  !(durationMs > 0) ||
  !isVariant(values.variant) ||
  !(volume in volumes) ||
  (values.failover !== undefined && values.failover !== 'sync' && values.failover !== 'async') ||
  (values.failover !== undefined && process.env['DATABASE_URL'])
) {
  console.error(
    `usage: npm run chaos -- [--seed <integer>] [--duration 30m] [--variant ${VARIANTS.join('|')}] [--volume high|normal] [--failover sync|async] (not with DATABASE_URL) [--skip-model]`,
  );
  process.exit(2);
}
const failover = values.failover as 'sync' | 'async' | undefined;
console.log(
  `chaos: seed ${seed}, duration ${values.duration}, variant ${values.variant}, volume ${volume}` +
    (failover ? `, failover ${failover}` : ''),
);
const result = await runChaos({
  seed,
  durationMs,
  variant: values.variant,
  ...volumes[volume],
  roles: { holder: 2, leader: 2, worker: 2, scheduler: 2, producer: 1, service: 1, workflow: 2 },
  faultTypes: failover ? FAILOVER_FAULT_TYPES : FAULT_TYPES,
  databaseUrl: process.env['DATABASE_URL'],
  ...(failover ? { failover } : {}),
  log: values.verbose ? (line) => console.log(`  ${line}`) : undefined,
});
console.log(`database: ${result.durability}`);
console.log(summaryLine(result));
console.log(linearizabilityLine(result.linearizability));
console.log(limitsLine(result.history));
console.log(workflowLine(result.history, result.violations));
if (failover) for (const line of failoverLines(result)) console.log(line);
// The design the run exercised, checked by the formal model (after the run, not to slow it).
const design = values['skip-model'] ? undefined : await checkDesign(failover);
if (design) console.log(design.line);
// Which children died on their own, and the last thing each said, so a crash can be looked into.
for (const crash of result.history.crashes)
  console.log(`crashed: ${crash.proc}#${crash.incarnation}: ${crash.stderr.slice(-3).join(' | ')}`);
if (result.violations.length > 0) {
  for (const line of violationLines(result)) console.log(line);
  const path = await saveHistory(result);
  console.log(`history: ${path}`);
  console.log(
    `replay: npm run chaos -- --seed ${seed} --duration ${values.duration} --variant ${values.variant} --volume ${volume}${failover ? ` --failover ${failover}` : ''}`,
  );
  process.exit(1);
}
if (design && !design.ok) process.exit(1);
// A failover run in which no standby was promoted proved nothing about failovers.
if (failover && promotionCount(result) === 0) {
  console.log('no failover or switchover promoted the standby: the run does not count');
  process.exit(1);
}
process.exit(0);
