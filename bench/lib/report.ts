/**
 * The report: markdown on stdout (settings and versions first, one table per family, the ratio
 * table last) and latest.json with every sample, the versions and the settings.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BenchCounts } from './counts.js';
import type { BenchDatabase } from './database.js';
import { describeMachine, type Machine } from './environment.js';
import { formatValue } from './format.js';
import type { ResultSet, Target } from './results.js';

export interface RunInfo {
  readonly profile: string;
  readonly repeat: number;
  readonly families: readonly string[];
  readonly counts: BenchCounts;
  readonly machine: Machine;
  readonly versions: Record<string, string>;
  readonly db: BenchDatabase;
  readonly startedAt: Date;
}

const target = (t: Target | undefined): string =>
  t ? `${t.op === '>=' ? '≥' : '≤'} ${t.value}` : '';

export function renderHeader(info: RunInfo): string {
  const m = info.machine;
  const lines = [
    '# leasehold benchmark',
    '',
    `Profile \`${info.profile}\`, ${info.repeat} round(s) per scenario, round-robin; ` +
      `started ${info.startedAt.toISOString()}.`,
    '',
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}; ` +
      `load average at start ${m.loadAverage.join(' / ')}.`,
    '',
    '| version | |',
    '|---|---|',
    ...Object.entries(info.versions).map(([k, v]) => `| ${k} | ${v} |`),
    '',
    `PostgreSQL (${info.db.origin === 'embedded' ? 'embedded, started for this run' : 'BENCH_DATABASE_URL'}):`,
    '',
    '| setting | value |',
    '|---|---|',
    ...Object.entries(info.db.settings).map(([k, v]) => `| ${k} | ${v || '(empty)'} |`),
    '',
  ];
  return lines.join('\n');
}

export function renderFamily(
  title: string,
  about: string,
  family: string,
  results: ResultSet,
): string {
  const rows = results.inFamily(family).map((m) => {
    const s = results.summary(m.id);
    const cell = (v: number | undefined) => (v === undefined ? '–' : formatValue(v, m.unit));
    const notes = [...new Set(m.notes)].join('; ');
    return `| ${m.label} | ${cell(s?.median)} | ${cell(s?.min)}–${cell(s?.max)} | ${m.unit} | ${m.samples.length} | ${notes} |`;
  });
  return [
    `## ${title}`,
    '',
    about,
    '',
    '| measurement | median | min–max | unit | rounds | notes |',
    '|---|---:|---:|---|---:|---|',
    ...rows,
    '',
  ].join('\n');
}

/** " (in 3 of 3 rounds)" beside "met", " (met in 1 of 3 rounds)" beside "missed". */
const inRoundsOf = (met: boolean | undefined, k: number, n: number): string =>
  ` (${met ? 'in' : 'met in'} ${k} of ${n} round${n === 1 ? '' : 's'})`;

export function renderRatios(results: ResultSet): string {
  const mark = (met: boolean | undefined) => (met === undefined ? '' : met ? 'met' : '**missed**');
  const rows = [
    ...results.ratios().map((r) => {
      const spread = r.rounds.length > 1 ? `${r.min.toFixed(2)}–${r.max.toFixed(2)}` : '';
      const inRounds =
        r.metRounds === undefined ? '' : inRoundsOf(r.met, r.metRounds, r.rounds.length);
      const status = r.met === undefined ? '' : `${mark(r.met)}${inRounds}`;
      return `| ${r.label} | \`${r.key}\` | ${r.value.toFixed(2)} | ${spread} | ${target(r.target)} | ${status} |`;
    }),
    ...results
      .checks()
      .map(
        (c) =>
          `| ${c.label} | \`${c.key}\` | ${formatValue(c.value, c.unit)} | | ${target(c.target)} | ${mark(c.met)}${inRoundsOf(c.met, c.metRounds, c.rounds)} |`,
      ),
  ];
  return [
    '## Ratios',
    '',
    'leasehold ÷ the other system (for latencies, lower is better), one named configuration on',
    'each side: the value is median ÷ median, the spread is the ratio of each round (both',
    'sides ran in turn in the same round). A target is met only when the median meets it; the',
    'rounds that met it are counted beside. The last rows are absolute figures.',
    '',
    '| comparison | key | median | rounds min–max | target | |',
    '|---|---|---:|---:|---|---|',
    ...rows,
    '',
  ].join('\n');
}

export function buildJson(info: RunInfo, results: ResultSet, finishedAt: Date): unknown {
  return {
    schemaVersion: 1,
    startedAt: info.startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationSeconds: Math.round((finishedAt.getTime() - info.startedAt.getTime()) / 1000),
    profile: info.profile,
    repeat: info.repeat,
    families: info.families,
    counts: info.counts,
    machine: { ...info.machine, loadAverageAtEnd: describeMachine().loadAverage },
    versions: info.versions,
    database: {
      origin: info.db.origin,
      settings: info.db.settings,
      statementStats: info.db.statementStats,
    },
    ratios: Object.fromEntries(results.ratios().map((r) => [r.key, r.value])),
    ratioDetails: results.ratios(),
    checks: results.checks(),
    figures: results.figures,
    measurements: Object.fromEntries(
      results.all().map((m) => [m.id, { ...m, ...(results.summary(m.id) ?? {}) }]),
    ),
  };
}

export async function writeJson(path: string, data: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(data, null, 2)}\n`);
}
