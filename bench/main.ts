/**
 * `npm run bench` (and `leasehold bench`): leasehold beside graphile-worker, pg-boss and raw
 * SQL, all on one PostgreSQL (embedded with default durability, or BENCH_DATABASE_URL), every
 * scenario repeated round-robin. Markdown on stdout, progress on stderr, every sample in
 * bench/results/latest.json.
 *
 *   npm run bench                     20k-job burn-downs, 60 s of sustained load, 3 rounds
 *   npm run bench -- --quick          everything small, in under 3 minutes
 *   npm run bench -- --full           100k-job burn-downs
 *   npm run bench -- --only burn-down,leases --repeat 5
 *   npm run bench -- --quick --only flow-control,herd
 */
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { PROFILES, type ProfileName } from './lib/counts.js';
import { checkpoint, startBenchDatabase } from './lib/database.js';
import { describeMachine, describeVersions } from './lib/environment.js';
import type { Family, FamilyContext } from './lib/family.js';
import { buildJson, renderFamily, renderHeader, renderRatios, writeJson } from './lib/report.js';
import { ResultSet } from './lib/results.js';
import { burnDownFamily } from './scenarios/burn-down.js';
import { enqueueFamily } from './scenarios/enqueue.js';
import { flowControlFamily } from './scenarios/flow-control.js';
import { herdFamily } from './scenarios/herd.js';
import { latencyFamily } from './scenarios/latency.js';
import { leasesFamily } from './scenarios/lease-throughput.js';
import { sustainedFamily } from './scenarios/sustained.js';
import { workflowFamily } from './scenarios/workflow.js';

/** In this order: sustained reads leasehold's maximum from the burn-down. */
export const FAMILIES: readonly Family[] = [
  burnDownFamily,
  enqueueFamily,
  latencyFamily,
  sustainedFamily,
  leasesFamily,
  flowControlFamily,
  herdFamily,
  workflowFamily,
];

const ROOT = new URL('..', import.meta.url).pathname;

interface BenchOptions {
  quick?: boolean;
  full?: boolean;
  repeat?: number;
  only?: string[];
  counts?: ProfileName;
  out: string;
}

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function familyList(value: string): string[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !FAMILIES.some((f) => f.name === n));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(`choose from ${FAMILIES.map((f) => f.name).join(', ')}`);
  return names;
}

function profileName(value: string): ProfileName {
  if (!(value in PROFILES))
    throw new InvalidArgumentError(`choose from ${Object.keys(PROFILES).join(', ')}`);
  return value as ProfileName;
}

function program(): Command {
  return new Command('bench')
    .description('leasehold beside graphile-worker, pg-boss and raw SQL on one PostgreSQL')
    .option('--quick', 'everything small (under 3 minutes)')
    .option('--full', 'burn-downs of 100k jobs, longer windows')
    .option('--repeat <n>', 'rounds per scenario (default 3)', positiveInteger)
    .option(
      '--only <families>',
      `comma-separated: ${FAMILIES.map((f) => f.name).join(', ')}`,
      familyList,
    )
    .option(
      '--counts <profile>',
      'use the counts of another profile (the test uses tiny)',
      profileName,
    )
    .option('--out <file>', 'where to write the JSON', 'bench/results/latest.json')
    .exitOverride();
}

/** Runs the benchmark; resolves with the exit code. */
export async function runBench(argv: string[]): Promise<number> {
  const cli = program();
  try {
    cli.parse(argv, { from: 'user' });
  } catch (error) {
    return (error as { exitCode?: number }).exitCode ?? 1;
  }
  const o = cli.opts<BenchOptions>();
  if (o.quick && o.full) {
    process.stderr.write('bench: --quick and --full exclude each other\n');
    return 1;
  }
  const profile: ProfileName = o.counts ?? (o.quick ? 'quick' : o.full ? 'full' : 'standard');
  const counts = PROFILES[profile];
  const repeat = o.repeat ?? counts.defaultRepeat;
  const families = FAMILIES.filter((f) => !o.only || o.only.includes(f.name));
  const out = resolve(ROOT, o.out);
  const progress = (line: string): void => void process.stderr.write(`  ${line}\n`);

  const startedAt = new Date();
  const machine = describeMachine();
  const db = await startBenchDatabase();
  try {
    const results = new ResultSet();
    const info = {
      profile: o.counts
        ? `${o.quick ? 'quick' : o.full ? 'full' : 'standard'} with ${profile} counts`
        : profile,
      repeat,
      families: families.map((f) => f.name),
      counts,
      machine,
      versions: await describeVersions(db.settings['server_version'] ?? 'unknown'),
      db,
      startedAt,
    };
    process.stdout.write(`${renderHeader(info)}\n`);
    const ctx: FamilyContext = { db, counts, repeat, results, progress };
    for (const family of families) {
      if (!(await checkpoint(db.url)))
        progress('CHECKPOINT refused (not a superuser): earlier writes may land on this family');
      progress(`${family.title}…`);
      const started = performance.now();
      await family.run(ctx);
      progress(`${family.title}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      process.stdout.write(
        `${renderFamily(family.title, family.about(ctx), family.name, results)}\n`,
      );
    }
    process.stdout.write(`${renderRatios(results)}\n`);
    await writeJson(out, buildJson(info, results, new Date()));
    process.stdout.write(`Every sample: ${out}\n`);
    return 0;
  } finally {
    await db.stop();
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && resolve(process.argv[1]) === new URL(import.meta.url).pathname;
if (invokedDirectly) {
  const code = await runBench(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  });
  // Peers keep timers and pools of their own; the benchmark is done with all of them.
  process.exit(code);
}
