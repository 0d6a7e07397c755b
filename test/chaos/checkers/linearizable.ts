/**
 * The check that does not depend on our own list of rules (issue 23): the run's lease operations
 * and fenced writes must be linearizable against the models of what a lease and a fence mean
 * (test/chaos/linearizability/). One violation per resource whose history is not; a resource the
 * search could not decide within its budget is a violation too, so nothing passes unchecked.
 */
import type { History, Violation } from '../history.js';
import { fencedRegisterModel } from '../linearizability/fenced-register-model.js';
import { operationsOf } from '../linearizability/from-history.js';
import { leaseModel } from '../linearizability/lease-model.js';
import {
  checkOperations,
  formatFailure,
  type Budget,
  type CheckResult,
} from '../linearizability/search.js';

/** What the check covered, for the run's report. */
export interface LinearizabilityStats {
  operations: number;
  /** Operations whose outcome was unknown (no answer, or an error). */
  unknown: number;
  partitions: number;
  /** The most operations in one partition (one resource's history). */
  longest: number;
  millis: number;
  verdict: 'ok' | 'illegal' | 'unknown';
}

export interface LinearizabilityReport {
  violations: Violation[];
  stats: LinearizabilityStats;
}

/**
 * Per partition: generous, since one resource of a 30-minute run has tens of thousands of
 * operations; a correct history is checked in about linear time (docs/reliability.md).
 */
const BUDGET: Budget = { maxSteps: 50_000_000, maxMillis: 60_000 };
/**
 * For the whole run: past it, the partitions not yet checked are undecided (and red) rather
 * than holding the run for the sum of their budgets. Refuting an illegal history can cost time
 * exponential in its concurrent unknown and forgettable operations (an asynchronous failover's
 * loss window has hundreds), where a correct one is found in about linear time.
 */
const TOTAL_MILLIS = 300_000;

export function checkLinearizability(history: History, budget = BUDGET): LinearizabilityReport {
  const ops = operationsOf(history);
  const started = performance.now();
  const left = (): Budget => ({
    ...budget,
    maxMillis: Math.max(
      0,
      Math.min(budget.maxMillis ?? Infinity, TOTAL_MILLIS - (performance.now() - started)),
    ),
  });
  const results: { label: string; result: CheckResult }[] = [
    { label: 'lease', result: checkOperations(leaseModel(), ops.leases, left) },
    {
      label: 'lease lock',
      result: checkOperations(leaseModel({ refusalsAnytime: true }), ops.locks, left),
    },
    {
      label: 'fenced register',
      result: checkOperations(fencedRegisterModel(), ops.registers, left),
    },
  ];
  const violations: Violation[] = [];
  const origin = history.events[0]?.t ?? 0;
  const since = (t: number): string => `+${((t - origin) / 1000).toFixed(3)} s`;
  for (const { label, result } of results)
    for (const p of result.partitions) {
      if (p.verdict === 'illegal') {
        const { blocking, from, to } = p.failure;
        violations.push({
          kind: 'linearizability',
          message:
            `${label} history not linearizable (${p.operations} operations): ${blocking.text}, ` +
            `by ${blocking.client}, answered at ${since(blocking.ret ?? to)}, cannot be placed ` +
            `in [${since(from)}, ${since(to)}] (${p.failure.pending.length} operations pending)`,
          evidence: formatFailure(p.failure, origin),
        });
      } else if (p.verdict === 'unknown')
        violations.push({
          kind: 'linearizability',
          message: `${label} history of ${p.operations} operations not decided: ${p.reason}`,
        });
    }
  const all = [ops.leases, ops.locks, ops.registers].flat();
  const partitions = results.flatMap((r) => r.result.partitions);
  return {
    violations,
    stats: {
      operations: all.length,
      unknown: all.filter((op) => op.unknown).length,
      partitions: partitions.length,
      longest: Math.max(0, ...partitions.map((p) => p.operations)),
      millis: results.reduce((sum, r) => sum + r.result.millis, 0),
      verdict: results.some((r) => r.result.verdict === 'illegal')
        ? 'illegal'
        : results.some((r) => r.result.verdict === 'unknown')
          ? 'unknown'
          : 'ok',
    },
  };
}

/** The report's line: what was checked, and how long it took. */
export function linearizabilityLine(stats: LinearizabilityStats): string {
  return (
    `linearizability: ${stats.operations} operations (${stats.unknown} with unknown outcome) in ` +
    `${stats.partitions} histories, longest ${stats.longest}, checked in ` +
    `${(stats.millis / 1000).toFixed(1)} s: ${stats.verdict}`
  );
}
