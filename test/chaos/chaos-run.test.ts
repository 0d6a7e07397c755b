// A short seeded chaos run of the real engine: every role (lease and session-lock holders,
// elected leaders, queue workers, schedule runners, a producer of coalesced enqueues, the HTTP
// service driven by its client) through the fault proxy, every fault type at
// least once (the plan's first round covers them all), and not one violation. (The workflow
// role runs in `npm run chaos`, which CI runs, and in `npm run test:variants`: here it would
// only lengthen the default test run.) On failure the
// history is saved under test-results/chaos/ for `npm run chaos -- --seed 4010 --duration 45s`.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { runChaos } from './harness/run-chaos.js';
import { saveHistory, summaryLine, violationLines } from './harness/report.js';
import { FAULT_TYPES } from './history.js';
import { linearizabilityLine } from './checkers/linearizable.js';
import { limitPeaks, limitsLine } from './checkers/limit-exceeded.js';

it(
  'the real engine survives a seeded run of every fault type with no violation',
  { timeout: 180_000 },
  async () => {
    const result = await runChaos({
      seed: 4010,
      durationMs: 45_000,
      variant: 'real',
      roles: {
        holder: 2,
        leader: 2,
        worker: 2,
        scheduler: 2,
        producer: 1,
        service: 1,
        workflow: 1,
      },
      faultTypes: FAULT_TYPES,
    });
    console.log(`# ${summaryLine(result)}`);
    console.log(`# ${linearizabilityLine(result.linearizability)}`);
    console.log(`# ${limitsLine(result.history)}`);
    for (const type of FAULT_TYPES) {
      assert.ok(
        result.faults.some((f) => f.type === type && !f.skipped),
        `fault ${type} was injected`,
      );
    }
    // Crash recovery is only worth exercising on a server that promises durability.
    assert.equal(result.durability, 'fsync on, synchronous_commit on, full_page_writes on');
    for (const crash of result.faults.filter((f) => f.type === 'pg-crash'))
      assert.match(crash.detail ?? '', /crash recovery ran/, 'the crashed server recovered');
    assert.ok(result.acquisitions > 20, 'terms turned over');
    assert.ok(result.jobs > 50, 'jobs flowed');
    // The linearizability checker ran over the lease and fenced-write histories, and decided.
    assert.ok(result.linearizability.operations > 100, 'operations were checked');
    assert.equal(result.linearizability.verdict, 'ok');
    // The limited queues ran, and their runs were judged against the limits.
    const peaks = limitPeaks(result.history);
    assert.equal(peaks.length, 3, 'three limited queues');
    for (const p of peaks) assert.ok(p.runs > 10, `${p.queue}: jobs ran`);
    // The workflow role ran steps and flow parents, judged by the step-once checker.
    const steps = result.history.facts.steps ?? [];
    assert.ok(steps.length > 20, 'workflow steps applied');
    assert.ok(
      steps.some((s) => s.unfinishedChildren !== null),
      'a flow parent ran',
    );
    if (result.violations.length > 0) {
      console.log(violationLines(result).join('\n'));
      console.log(`# history: ${await saveHistory(result)}`);
    }
    assert.deepEqual(
      result.violations.map((v) => v.message),
      [],
    );
  },
);
