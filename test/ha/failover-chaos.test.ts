// The failover checkers proven end to end on the real HA cluster: an engine that gives up the
// synchronous guarantee (the async-commit variant: `synchronous_commit = off` on every
// connection, so a commit answers before the standby, or even the primary's disk, has it) runs
// under synchronous replication, replication is held back and the primary killed meanwhile:
// what it acknowledged in that window is gone from the promoted standby, and "acknowledged,
// then lost" must say so. The real engine's runs are `npm run chaos -- --failover sync|async`
// (the synchronous one is a step of .ci/run).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runChaos } from '../chaos/harness/run-chaos.js';
import { failoverLines, saveHistory, summaryLine } from '../chaos/harness/report.js';
import { haSkip } from '../support/ha-cluster.js';

const skip = haSkip();

describe('failover chaos: a broken engine is caught', { skip }, () => {
  it(
    'async-commit under synchronous replication: a failover during standby-lag loses acknowledged writes (acknowledged-lost)',
    { timeout: 900_000 },
    async () => {
      const result = await runChaos({
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
      });
      console.log(`# ${summaryLine(result)}`);
      for (const line of failoverLines(result)) console.log(`# ${line}`);
      const kinds = new Set(result.violations.map((v) => v.kind));
      if (!kinds.has('acknowledged-lost')) console.log(`# history: ${await saveHistory(result)}`);
      assert.ok(
        result.faults.some((f) => f.promotion?.duringLag),
        'a failover happened while replication was held',
      );
      assert.ok(
        kinds.has('acknowledged-lost'),
        `expected acknowledged-lost, got ${[...kinds].join(', ') || 'none'}`,
      );
      // Synchronous replication explains nothing away: every loss is a violation.
      assert.deepEqual(result.losses, []);
    },
  );
});
