/**
 * The outcome of a run for people: one summary line (with the count of each fault type), and on
 * failure the whole history as JSON under test-results/chaos/, named by seed, for replay.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FAULT_TYPES } from '../history.js';
import type { ChaosResult } from './run-chaos.js';

const RESULTS = new URL('../../../test-results/chaos/', import.meta.url).pathname;

export function summaryLine(result: ChaosResult): string {
  const { history, violations } = result;
  const injected = result.faults.filter((f) => !f.skipped);
  const perType = FAULT_TYPES.map((type) => {
    const all = result.faults.filter((f) => f.type === type);
    const skipped = all.filter((f) => f.skipped);
    if (skipped.length > 0) return `${type} skipped (${skipped[0]!.skipped})`;
    return `${type} ${all.length}`;
  });
  return (
    `${result.acquisitions} acquisitions, ${result.jobs} jobs, ${injected.length} faults, ` +
    `${violations.length} violations, seed ${history.seed} (${perType.join(', ')})` +
    (history.crashes.length > 0 ? `; ${history.crashes.length} children crashed` : '')
  );
}

/** Violations grouped by kind, one line each, for the console. */
export function violationLines(result: ChaosResult, perKind = 3): string[] {
  const byKind = new Map<string, string[]>();
  for (const v of result.violations) byKind.set(v.kind, [...(byKind.get(v.kind) ?? []), v.message]);
  return [...byKind].flatMap(([kind, messages]) => [
    `  ${kind}: ${messages.length}`,
    ...messages.slice(0, perKind).map((m) => `    ${m}`),
  ]);
}

/** Writes the history and its violations; returns the file's path. */
export async function saveHistory(result: ChaosResult): Promise<string> {
  await mkdir(RESULTS, { recursive: true });
  const { seed, variant } = result.history;
  const path = join(RESULTS, `chaos-${variant}-seed-${seed}-${Date.now()}.json`);
  await writeFile(
    path,
    JSON.stringify({
      summary: summaryLine(result),
      violations: result.violations,
      history: result.history,
    }),
  );
  return path;
}
