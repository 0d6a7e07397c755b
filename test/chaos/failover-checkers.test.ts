// The failover parts of the chaos harness that need no cluster: acknowledged-then-lost across
// failovers (a violation in sync mode and after a switchover; a counted, explained loss after an
// asynchronous failover), the new acknowledgements the checker audits, the failover summary
// line, and the fault plan of a failover run. (The runs on the HA cluster are
// test/ha/failover-chaos.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAcknowledgedLost } from './checkers/acknowledged-lost.js';
import { checkLinearizability } from './checkers/linearizable.js';
import { explainFailoverLosses } from './checkers/failover-losses.js';
import { checkHistory } from './checkers/index.js';
import { checkSlotOnce } from './checkers/slot-once.js';
import { planFaults } from './harness/fault-plan.js';
import type { ChaosResult } from './harness/run-chaos.js';
import { failoverLines, summaryLine } from './harness/report.js';
import { historyOf, leaseOp } from './history-builder.js';
import {
  FAILOVER_FAULT_TYPES,
  type FaultRecord,
  type History,
  type PromotionRecord,
  type ReplicationMode,
} from './history.js';
import { seededRandom } from './random.js';

const promotion = (kind: 'failover' | 'switchover', at: number): PromotionRecord => ({
  kind,
  at,
  from: 'a',
  to: 'b',
  timeline: 2,
  unavailableMs: 9_000,
});

const fault = (p: PromotionRecord): FaultRecord => ({
  type: p.kind,
  target: null,
  startedAt: p.at,
  endedAt: p.at + 20_000,
  promotion: p,
});

/** Job 1 enqueued (acknowledged at t=100) but absent; a lease term of token 7 acknowledged at t=5000 but absent. */
function lossyHistory(replication: ReplicationMode, promotions: PromotionRecord[]): History {
  const history = historyOf(
    [
      { type: 'enqueue-ack', jobIds: [1], proc: 'producer', t: 100 },
      { ...leaseOp('acquire', 'h', 7, 4_900, 6_400), t: 5_000 },
    ],
    {
      facts: { storedTokens: [{ family: 'lease', resource: 'r', token: 6 }] },
      faults: promotions.map(fault),
    },
  );
  return { ...history, replication };
}

describe('acknowledged, then lost, across failovers', () => {
  it('every loss is a violation in a synchronous run', () => {
    const history = lossyHistory('sync', [
      promotion('failover', 200),
      promotion('failover', 5_500),
    ]);
    const { violations, losses } = explainFailoverLosses(history, checkHistory(history));
    assert.deepEqual(
      violations.map((v) => v.kind),
      ['acknowledged-lost', 'acknowledged-lost'],
    );
    assert.deepEqual(losses, []);
  });

  it('an asynchronous failover explains the losses acknowledged before its kill, each in its own failover', () => {
    const history = lossyHistory('async', [
      promotion('failover', 200),
      promotion('failover', 5_500),
    ]);
    const { violations, losses } = explainFailoverLosses(history, checkHistory(history));
    assert.deepEqual(violations, []);
    assert.deepEqual(
      losses.map((l) => [l.failover, l.violation.kind]),
      [
        [1, 'acknowledged-lost'],
        [2, 'acknowledged-lost'],
      ],
    );
    assert.match(
      losses[1]!.explanation,
      /acknowledged 500 ms before the failover of a began \(failover 2/,
    );
  });

  it('a switchover explains nothing, nor does a failover before the acknowledgement', () => {
    const switched = lossyHistory('async', [promotion('switchover', 6_000)]);
    assert.equal(explainFailoverLosses(switched, checkHistory(switched)).violations.length, 2);
    const earlier = lossyHistory('async', [promotion('failover', 50)]);
    const verdict = explainFailoverLosses(earlier, checkHistory(earlier));
    assert.deepEqual(
      verdict.violations.map((v) => v.message),
      ['lease:r: acquire of token 7 by h was acknowledged but the stored token is 6'],
    );
    assert.equal(verdict.losses.length, 1);
  });

  it('a loss from before the standby can have been behind stays a violation', () => {
    // Job 1 was acknowledged at t=100: 5.9 s before a plain failover, or 0.9 s before the hold.
    const plain = lossyHistory('async', [promotion('failover', 6_000)]);
    assert.deepEqual(
      explainFailoverLosses(plain, checkHistory(plain)).violations.map((v) => v.message),
      ['job 1 was acknowledged as enqueued but does not exist'],
    );
    const held = lossyHistory('async', [
      { ...promotion('failover', 6_000), duringLag: true, heldSince: 1_000 },
    ]);
    const verdict = explainFailoverLosses(held, checkHistory(held));
    assert.deepEqual(verdict.violations, []);
    assert.match(verdict.losses[0]!.explanation, /replication held back by standby-lag/);
  });

  it('token order and overlap are never explained away', () => {
    const history = {
      ...historyOf(
        [leaseOp('acquire', 'a', 5, 1_000, 2_000), leaseOp('acquire', 'b', 5, 1_500, 3_000)],
        {
          faults: [fault(promotion('failover', 10_000))],
          facts: { storedTokens: [{ family: 'lease', resource: 'r', token: 5 }] },
        },
      ),
      replication: 'async' as const,
    };
    const { violations, losses } = explainFailoverLosses(history, checkHistory(history));
    assert.deepEqual(violations.map((v) => v.kind).sort(), ['overlap', 'token-order']);
    assert.deepEqual(losses, []);
  });

  it('judges a session-lock token of a later epoch by its sequence part', () => {
    const grant = (token: number) => ({
      type: 'session-term' as const,
      resource: 's',
      holder: 'a',
      token,
      phase: 'granted' as const,
    });
    const history = historyOf([grant(2 ** 32 + 275), grant(2 ** 32 + 276)], {
      facts: { storedTokens: [{ family: 'session', resource: '*', token: 275 }] },
    });
    assert.deepEqual(
      checkAcknowledgedLost(history).map((v) => v.message),
      [
        'session:s: token 4294967572 (sequence value 276) was granted to a but the token sequence stands at 275',
      ],
    );
  });

  it('audits claims and single enqueues too, and a slot run again after its row vanished', () => {
    const history = historyOf(
      [
        { type: 'job', phase: 'started', jobId: 3, generation: 9 },
        { type: 'job', phase: 'started', jobId: 4, generation: 2 },
        { type: 'enqueue', phase: 'ok', opId: 'op-1', part: 'p', seq: 1, jobId: 10 },
        { type: 'enqueue', phase: 'ok', opId: 'op-2', part: 'p', seq: 2, jobId: 11 },
      ],
      {
        facts: {
          jobs: [
            { id: 3, status: 'pending', generation: 8 },
            { id: 4, status: 'pending', generation: 2 },
          ],
          enqueued: [{ id: 11, opId: 'op-2', part: 'p', seq: 2 }],
        },
      },
    );
    assert.deepEqual(
      checkAcknowledgedLost(history).map((v) => v.message),
      [
        'job 3: claim of generation 9 was acknowledged but the job is at generation 8',
        'job 10 (call op-1) was acknowledged as enqueued but does not exist',
      ],
    );
    const slot = historyOf([
      { type: 'slot', name: 's', slot: 1_000, token: 1, proc: 'a', t: 50 },
      { type: 'slot', name: 's', slot: 1_000, token: 2, proc: 'b', t: 90 },
    ]);
    assert.deepEqual(
      checkSlotOnce(slot).map((v) => v.ackedAt),
      [50],
    );
  });
});

describe('the failover summary', () => {
  it('is the line of the issue, with the promotions counted and losses listed after it', () => {
    const history = lossyHistory('async', [promotion('failover', 200)]);
    const { violations, losses } = explainFailoverLosses(history, checkHistory(history));
    const result: ChaosResult = {
      history,
      violations,
      losses,
      acquisitions: 12,
      jobs: 30,
      faults: [
        ...history.faults,
        { type: 'switchover', target: null, startedAt: 1, endedAt: 2, detail: 'no promotion' },
        { type: 'sigkill', target: 'holder-1', startedAt: 3, endedAt: 4 },
      ],
      durability: '',
      linearizability: checkLinearizability(history).stats,
    };
    assert.equal(
      summaryLine(result),
      '12 acquisitions, 30 jobs, 3 faults, 1 failovers, 1 violations (mode async, seed 1)',
    );
    const lines = failoverLines(result);
    assert.match(lines[0]!, /^faults: sigkill 1, .*failover 1, switchover 1, standby-lag 0$/);
    assert.ok(
      lines.includes('acknowledged, then lost: 1 (asynchronous replication; not violations)'),
    );
    assert.ok(
      lines.some((l) =>
        /^ {2}failover 1: 1 \(acknowledged-lost 1\); acknowledged 100 ms before/.test(l),
      ),
    );
  });

  it('a failover plan draws only failover-mode faults, the cluster ones on the cluster', () => {
    const plan = planFaults(seededRandom(7), {
      durationMs: 300_000,
      types: FAILOVER_FAULT_TYPES,
      targets: ['holder-1', 'worker-1'],
      gapMs: [1_000, 2_500],
      freezeMs: [1_800, 3_300],
    });
    assert.deepEqual(new Set(plan.map((f) => f.type)), new Set(FAILOVER_FAULT_TYPES));
    for (const f of plan) {
      const onCluster = ['failover', 'switchover', 'standby-lag'].includes(f.type);
      assert.equal(f.target === null, onCluster, `${f.type} target`);
    }
    const lags = plan.filter((f) => f.type === 'standby-lag');
    assert.ok(lags.some((f) => f.thenFailover) && lags.some((f) => !f.thenFailover));
  });
});
