// The failover checkers proven end to end on the real HA cluster: each deliberately broken
// engine runs under the replication that exposes it, replication is held back (standby-lag) and
// the primary killed meanwhile, and the expected checker must go red.
// - async-commit under synchronous replication: `synchronous_commit = off` on every connection,
//   so a commit answers before the standby (or the primary's disk) has it; the promoted standby
//   lacks what it acknowledged in the window: "acknowledged, then lost", not explained away
//   since the cluster is synchronous.
// - no-epoch under asynchronous replication: tokens without the server epoch; the promoted
//   standby lacks the last grants, and the next holders are handed tokens already handed out:
//   token order, which no replication mode excuses.
// The real engine's runs are `npm run chaos -- --failover sync|async` (the synchronous one is a
// step of .ci/run).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runChaos, type ChaosOptions } from '../chaos/harness/run-chaos.js';
import { failoverLines, saveHistory, summaryLine } from '../chaos/harness/report.js';
import type { ViolationKind } from '../chaos/history.js';
import { haSkip } from '../support/ha-cluster.js';

const skip = haSkip();

interface Case {
  name: string;
  expected: ViolationKind;
  options: ChaosOptions;
}

const CASES: Case[] = [
  {
    name: 'async-commit under synchronous replication loses acknowledged writes in a failover (acknowledged-lost)',
    expected: 'acknowledged-lost',
    options: {
      seed: 2263,
      durationMs: 15_000,
      variant: 'async-commit',
      failover: 'sync',
      roles: { worker: 2, holder: 1 },
      faultTypes: ['standby-lag'],
      lagFailoverChance: 1,
      jobEveryMs: 100,
      jobsPerEnqueue: 5,
      jobWorkMs: [0, 30],
      workerConcurrency: 4,
    },
  },
  {
    name: 'no-epoch under asynchronous replication hands out a token twice after a lossy failover (token-order)',
    expected: 'token-order',
    options: {
      seed: 2264,
      durationMs: 15_000,
      variant: 'no-epoch',
      failover: 'async',
      // Holders churning short terms on shared leases: many grants in the lost window.
      roles: { holder: 2 },
      churn: { resources: 4, loops: 3 },
      faultTypes: ['standby-lag'],
      lagFailoverChance: 1,
    },
  },
];

describe('failover chaos: broken engines are caught', { skip }, () => {
  for (const c of CASES) {
    it(`${c.options.variant}: ${c.name}`, { timeout: 900_000 }, async () => {
      const result = await runChaos(c.options);
      console.log(`# ${summaryLine(result)}`);
      for (const line of failoverLines(result)) console.log(`# ${line}`);
      const kinds = new Set(result.violations.map((v) => v.kind));
      if (!kinds.has(c.expected)) console.log(`# history: ${await saveHistory(result)}`);
      assert.ok(
        result.faults.some((f) => f.promotion?.duringLag),
        'a failover happened while replication was held',
      );
      assert.ok(
        kinds.has(c.expected),
        `expected ${c.expected}, got ${[...kinds].join(', ') || 'none'}`,
      );
      // Synchronous replication explains nothing away: every loss is a violation.
      if (c.options.failover === 'sync') assert.deepEqual(result.losses, []);
    });
  }
});
