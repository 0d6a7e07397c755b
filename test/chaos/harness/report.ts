/**
 * The outcome of a run for people: one summary line (with the count of each fault type), and on
 * failure the whole history as JSON under test-results/chaos/, named by seed, for replay.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FAILOVER_FAULT_TYPES, FAULT_TYPES, type History, type Violation } from '../history.js';
import type { ChaosResult } from './run-chaos.js';

const RESULTS = new URL('../../../test-results/chaos/', import.meta.url).pathname;

export function summaryLine(result: ChaosResult): string {
  const { history, violations } = result;
  const injected = result.faults.filter((f) => !f.skipped);
  if (history.replication)
    return (
      `${result.acquisitions} acquisitions, ${result.jobs} jobs, ${injected.length} faults, ` +
      `${promotionCount(result)} failovers, ${violations.length} violations ` +
      `(mode ${history.replication}, seed ${history.seed})`
    );
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

/** Failovers and switchovers that promoted the standby (a fault that did not is not counted). */
export function promotionCount(result: ChaosResult): number {
  return result.faults.filter((f) => f.promotion).length;
}

/**
 * The lines a failover run prints after its summary: the count of each fault type, each
 * promotion with how long writes were refused, and the acknowledgements lost to asynchronous
 * failovers (counted, not violations), grouped by failover.
 */
export function failoverLines(result: ChaosResult): string[] {
  const perType = FAILOVER_FAULT_TYPES.map((type) => {
    const all = result.faults.filter((f) => f.type === type);
    const skipped = all.filter((f) => f.skipped);
    return `${type} ${all.length - skipped.length}${skipped.length > 0 ? ` (${skipped.length} skipped: ${skipped[0]!.skipped})` : ''}`;
  });
  const lines = [`faults: ${perType.join(', ')}`];
  const promotions = result.faults.flatMap((f) => (f.promotion ? [f.promotion] : []));
  for (const [i, p] of promotions.entries())
    lines.push(
      `${p.kind} ${i + 1}: ${p.from} -> ${p.to}, timeline ${p.timeline}, writes refused for ${p.unavailableMs} ms` +
        (p.healthyAfterMs === undefined
          ? ''
          : `, ${p.from} streaming again after ${p.healthyAfterMs} ms`) +
        (p.duringLag ? ' (replication held back)' : ''),
    );
  for (const kind of ['failover', 'switchover'] as const) {
    const refused = promotions
      .filter((p) => p.kind === kind)
      .map((p) => p.unavailableMs)
      .sort((a, b) => a - b);
    if (refused.length > 0)
      lines.push(
        `writes refused per ${kind}: ${refused.length} of them, min ${refused[0]} ms, ` +
          `median ${refused[Math.floor((refused.length - 1) / 2)]} ms, max ${refused[refused.length - 1]} ms`,
      );
  }
  const losses = result.losses;
  lines.push(
    `acknowledged, then lost: ${losses.length}` +
      (result.history.replication === 'async' ? ' (asynchronous replication; not violations)' : ''),
  );
  const byFailover = new Map<number, typeof losses>();
  for (const loss of losses)
    byFailover.set(loss.failover, [...(byFailover.get(loss.failover) ?? []), loss]);
  for (const [failover, lost] of byFailover) {
    const kinds = new Map<string, number>();
    for (const l of lost) kinds.set(l.violation.kind, (kinds.get(l.violation.kind) ?? 0) + 1);
    lines.push(
      `  failover ${failover}: ${lost.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}); ${lost[0]!.explanation}`,
    );
  }
  return lines;
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
      losses: result.losses,
      history: result.history,
    }),
  );
  return path;
}

/** The workflow role's figures: its jobs, the step rows they wrote, and the step-once verdict. */
export function workflowLine(history: History, violations: readonly Violation[]): string {
  const jobs = history.facts.workflowJobs ?? [];
  const steps = history.facts.steps ?? [];
  const parents = steps.filter((s) => s.unfinishedChildren !== null).length;
  const bad = violations.filter((v) => v.kind === 'step-once').length;
  return `workflows: ${jobs.length} jobs, ${steps.length} steps applied (${parents} flow parents), ${bad} step-once violations`;
}
