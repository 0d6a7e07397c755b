// The benchmark must not rot: `--quick --counts tiny` runs every scenario once, with tiny counts,
// against the test database (BENCH_DATABASE_URL, so no second server starts), prints the ratio
// table and writes a JSON with every ratio. No figure is held to a target here: timings on a
// shared test machine say nothing.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startCli, startScript } from '../support/cli-process.js';
import { closeTestDatabase, testDatabaseUrl } from '../support/database.js';

after(closeTestDatabase);

const ROOT = new URL('../..', import.meta.url).pathname;

/** Every ratio the benchmark defines; the pgbench ones only when pgbench is installed. */
const RATIO_KEYS = [
  'burnDownVsGraphile',
  'burnDownVsPgBoss',
  'burnDownDefaultsC1VsGraphile',
  'burnDownDefaultsC10VsGraphile',
  'burnDownDefaultsC50VsGraphile',
  'burnDownDefaultsVsGraphile',
  'burnDownDefaultsVsPgBoss',
  'burnDownMetricsVsPlain',
  'burnDownPullVsPush',
  'burnDownPullVsGraphile',
  'bulkEnqueueVsGraphile',
  'bulkEnqueueVsPgBoss',
  'singleEnqueueVsGraphile',
  'singleEnqueueVsPgBoss',
  'singleEnqueueVsRawInsert',
  'singleEnqueueVsRawInsertNotify',
  'latencyP50VsGraphile',
  'latencyP50VsPgBoss',
  'latencyP99VsGraphile',
  'latencyP99VsPgBoss',
  'sustainedPickupP50VsGraphile',
  'sustainedPickupP99VsGraphile',
  'sustainedWalBytesPerJobVsGraphile',
  'sustainedPickupP50VsPgBoss',
  'sustainedPickupP99VsPgBoss',
  'leasePairsVsRawSql',
  'leaseRenewsVsRawSql',
  'httpVsInProcess',
  'httpRenewsVsInProcess',
  'httpSameProcessVsInProcess',
  'httpNodeClientVsInProcess',
  'httpNodeClientRenewsVsInProcess',
  'httpNodeClientAt64VsInProcess',
  'httpNodeClientRenewsAt64VsInProcess',
  'burnDownCappedVsUnlimited',
  'stepVsCompleteInTransaction',
  'burnDownPerKey4VsUnlimited',
];
/** The absolute figures held to a target that this test looks for (the herd's and flow control's). */
const CHECK_KEYS = ['herdQueriesPerProcess', 'herdLimitedQueriesPerProcess', 'resumeFirstStartP50'];
const PGBENCH_KEYS = ['leasePairsVsPgbench', 'leaseRenewsVsPgbench'];

interface Report {
  ratios: Record<string, number>;
  ratioDetails: {
    key: string;
    numerator: unknown;
    denominator: unknown;
    rounds: number[];
    target?: unknown;
    metRounds?: number;
  }[];
  checks: { key: string; value: number; rounds: number }[];
  versions: Record<string, string>;
  database: { settings: Record<string, string> };
  figures: {
    pgbench: string | null;
    idleLatencyMs: Record<string, Record<string, { median: number } | null>>;
    herd: { queriesPerSecondPerProcess: { median: number }; method: string };
  };
  measurements: Record<string, { samples: number[] }>;
}

const isPositive = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v > 0;

describe('the benchmark', () => {
  it('runs every scenario with tiny counts, prints the ratio table and writes every ratio to its JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-bench-test-'));
    try {
      const out = join(dir, 'latest.json');
      const bench = startScript(
        `${ROOT}bench/main.ts`,
        ['--quick', '--counts', 'tiny', '--out', out],
        { BENCH_DATABASE_URL: await testDatabaseUrl() },
      );
      const { code } = await bench.exited();
      const output = bench.lines.join('\n');
      assert.equal(code, 0, output);
      assert.match(output, /^## Ratios$/m);
      assert.match(output, /\| comparison \| key \| median \| rounds min–max \| target \|/);
      assert.match(output, /`burnDownVsGraphile` \| \d+\.\d\d \|/);

      const report = JSON.parse(await readFile(out, 'utf8')) as Report;
      const keys = [...RATIO_KEYS, ...(report.figures.pgbench ? PGBENCH_KEYS : [])];
      for (const key of keys)
        assert.ok(isPositive(report.ratios[key]), `ratios.${key} = ${report.ratios[key]}`);
      // Every ratio names one measurement a side and carries its rounds; a target, the count of
      // rounds that met it.
      for (const r of report.ratioDetails) {
        assert.equal(typeof r.numerator, 'string', r.key);
        assert.equal(typeof r.denominator, 'string', r.key);
        assert.equal(r.rounds.length, 1, `${r.key}: one round at --counts tiny`);
        if (r.target) assert.ok(r.metRounds === 0 || r.metRounds === 1, r.key);
      }
      for (const key of CHECK_KEYS) {
        const check = report.checks.find((c) => c.key === key);
        assert.ok(check && Number.isFinite(check.value) && check.value >= 0, `check ${key}`);
        assert.equal(check.rounds, 1, `${key}: one round at --counts tiny`);
      }
      for (const system of ['leasehold', 'graphile', 'pgBoss'])
        for (const level of ['p50', 'p95', 'p99'])
          assert.ok(
            isPositive(report.figures.idleLatencyMs[system]?.[level]?.median),
            `${system} ${level}`,
          );
      const herd = report.figures.herd.queriesPerSecondPerProcess.median;
      assert.ok(Number.isFinite(herd) && herd >= 0, `herd: ${herd}`);
      for (const name of ['node', 'pg', 'graphile-worker', 'pg-boss', 'postgresql'])
        assert.ok(report.versions[name], `version of ${name}`);
      assert.ok(report.database.settings['synchronous_commit']);
      for (const [id, m] of Object.entries(report.measurements))
        assert.ok(m.samples.length > 0, `${id} has no sample`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is also `leasehold bench`, which passes its options through', async () => {
    const cli = startCli(['bench', '--help']);
    const { code } = await cli.exited();
    const output = cli.lines.join('\n');
    assert.equal(code, 0, output);
    assert.match(output, /--quick/);
    assert.match(output, /--only <families>/);
  });
});
