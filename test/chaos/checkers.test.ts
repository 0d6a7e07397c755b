// Each checker on hand-made histories: one that breaks its rule (the violation must be reported)
// and one that keeps it (nothing reported), so a checker that always or never complains fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAcknowledgedLost } from './checkers/acknowledged-lost.js';
import { checkExpiredRenewal } from './checkers/expired-renewal.js';
import { checkFencedCounter } from './checkers/fenced-counter.js';
import { checkHolderOverlap } from './checkers/holder-overlap.js';
import { checkJobOutcome } from './checkers/job-outcome.js';
import { checkLateAbort } from './checkers/late-abort.js';
import { checkLeaks } from './checkers/leaks.js';
import { checkSlotOnce } from './checkers/slot-once.js';
import { checkSlowTakeover } from './checkers/slow-takeover.js';
import { checkSupersededCompletion } from './checkers/superseded-completion.js';
import { checkTokenOrder } from './checkers/token-order.js';
import { checkLimitExceeded, jobRuns } from './checkers/limit-exceeded.js';
import { checkStepOnce } from './checkers/step-once.js';
import { historyOf, jobClaim, jobCompleted, leaseOp } from './history-builder.js';
import type { Violation } from './history.js';

const kinds = (violations: Violation[]): string[] => violations.map((v) => v.kind);

describe('chaos checkers', () => {
  it('token order: reports a token reused by another holder and a token that went back', () => {
    const reused = historyOf([
      leaseOp('acquire', 'a', 5, 1_000, 2_000),
      leaseOp('acquire', 'b', 5, 3_000, 4_000),
      leaseOp('acquire', 'c', 4, 5_000, 6_000),
    ]);
    const messages = checkTokenOrder(reused).map((v) => v.message);
    assert.equal(messages.length, 2);
    assert.match(messages[0]!, /token 5 reused by b/);
    assert.match(messages[1]!, /token 4 of c began after token 5/);
    const session = historyOf([
      { type: 'session-term', resource: 's', holder: 'a', token: 7, phase: 'granted' },
      { type: 'session-term', resource: 's', holder: 'b', token: 7, phase: 'granted' },
    ]);
    assert.deepEqual(kinds(checkTokenOrder(session)), ['token-order']);
    const fine = historyOf([
      leaseOp('acquire', 'a', 1, 1_000, 2_000),
      leaseOp('renew', 'a', 1, 1_500, 2_500),
      leaseOp('acquire', 'b', 2, 3_000, 4_000),
    ]);
    assert.deepEqual(checkTokenOrder(fine), []);
  });

  it('overlap: reports a term that began before the previous one ended on the database clock', () => {
    const overlapping = historyOf([
      leaseOp('acquire', 'a', 1, 1_000, 2_000),
      leaseOp('renew', 'a', 1, 1_800, 2_800),
      leaseOp('acquire', 'b', 2, 2_500, 3_500),
    ]);
    assert.deepEqual(kinds(checkHolderOverlap(overlapping)), ['overlap']);
    const released = historyOf([
      leaseOp('acquire', 'a', 1, 1_000, 2_000),
      leaseOp('release', 'a', 1, 1_200, 1_200),
      leaseOp('acquire', 'b', 2, 1_300, 2_300),
    ]);
    assert.deepEqual(checkHolderOverlap(released), []);
  });

  it('overlap: a release whose answer was lost may have ended the term when it was sent, not later', () => {
    // a's release of token 1 was sent at 1,200 and its answer lost (connection reset): it may
    // have committed, so b taking the lease at 1,400 proves nothing.
    const lostRelease = (sentAt: number) => ({
      type: 'lease-op' as const,
      family: 'lease' as const,
      op: 'release' as const,
      resource: 'r',
      holder: 'a',
      invokedAt: sentAt,
      ok: false,
      requestedToken: 1,
    });
    const acquired = [
      leaseOp('acquire', 'a', 1, 1_000, 2_000),
      lostRelease(1_200),
      leaseOp('acquire', 'b', 2, 1_400, 2_400),
    ];
    assert.deepEqual(checkHolderOverlap(historyOf(acquired)), []);
    // Sent after b had the lease: a's term was still live when b's began.
    const late = [
      leaseOp('acquire', 'a', 1, 1_000, 2_000),
      leaseOp('acquire', 'b', 2, 1_400, 2_400),
      lostRelease(1_600),
    ];
    assert.deepEqual(kinds(checkHolderOverlap(historyOf(late))), ['overlap']);
  });

  it('expired renewal: reports a renewal applied after the term had expired', () => {
    const revived = historyOf([
      leaseOp('acquire', 'a', 1, 1_000, 2_000),
      leaseOp('renew', 'a', 1, 2_600, 3_600),
    ]);
    assert.deepEqual(kinds(checkExpiredRenewal(revived)), ['expired-renewal']);
    const live = historyOf([
      leaseOp('acquire', 'a', 1, 1_000, 2_000),
      leaseOp('renew', 'a', 1, 1_999, 2_999),
    ]);
    assert.deepEqual(checkExpiredRenewal(live), []);
  });

  it('fenced counter: reports a lost update, a doubled one, a stale token and a lost acknowledgement', () => {
    const broken = historyOf(
      [
        { type: 'increment', phase: 'ok', scope: 'c', opId: 'op-3', token: 2 },
        {
          type: 'increment',
          phase: 'fail',
          scope: 'c',
          opId: 'op-2',
          token: 1,
          error: 'stale_token',
        },
      ],
      {
        facts: {
          counters: [{ scope: 'c', value: 2 }],
          ledger: [
            { seq: 1, scope: 'c', opId: 'op-1', token: 2 },
            { seq: 2, scope: 'c', opId: 'op-2', token: 1 },
            { seq: 3, scope: 'c', opId: 'op-1', token: 2 },
          ],
        },
      },
    );
    const messages = checkFencedCounter(broken).map((v) => v.message);
    assert.ok(
      messages.some((m) => /counter is 2 but 3 increments committed \(lost update\)/.test(m)),
      messages.join('\n'),
    );
    assert.ok(messages.some((m) => /token 1 committed after token 2/.test(m)));
    assert.ok(messages.some((m) => /op-1 committed 2 times/.test(m)));
    assert.ok(messages.some((m) => /op-3 was acknowledged but is not in the ledger/.test(m)));
    assert.ok(messages.some((m) => /op-2 failed \(stale_token\) but committed anyway/.test(m)));
    const fine = historyOf(
      [{ type: 'increment', phase: 'ok', scope: 'c', opId: 'op-1', token: 1 }],
      {
        facts: {
          counters: [{ scope: 'c', value: 1 }],
          ledger: [{ seq: 1, scope: 'c', opId: 'op-1', token: 1 }],
        },
      },
    );
    assert.deepEqual(checkFencedCounter(fine), []);
  });

  it('late abort: reports a signal fired past deadline + margin, unless the process was frozen', () => {
    const trust = {
      type: 'trust' as const,
      resource: 'r',
      holder: 'a',
      token: 1,
      trustedUntil: 1_000,
      marginMs: 300,
    };
    const signal = {
      type: 'signal' as const,
      resource: 'r',
      holder: 'a',
      token: 1,
      reason: 'lease_lost',
    };
    const late = historyOf([
      { ...trust, t: 0 },
      { ...signal, t: 1_500 },
    ]);
    assert.deepEqual(kinds(checkLateAbort(late)), ['late-abort']);
    const frozen = historyOf(
      [
        { ...trust, t: 0 },
        { ...signal, t: 1_500 },
      ],
      {
        faults: [{ type: 'sigstop', target: 'p1', startedAt: 900, endedAt: 1_400 }],
      },
    );
    assert.deepEqual(checkLateAbort(frozen), []);
    const onTime = historyOf([
      { ...trust, t: 0 },
      { ...signal, t: 1_200 },
    ]);
    assert.deepEqual(checkLateAbort(onTime), []);
  });

  it('slow takeover: reports a leader elected long after the previous term ended, unless faults excuse it', () => {
    const election = { family: 'lock' as const, resource: 'leasehold:election:e' };
    const events = [
      leaseOp('acquire', 'a', 1, 1_000, 2_500, { ...election, proc: 'p1' }),
      leaseOp('acquire', 'b', 2, 6_000, 7_500, { ...election, proc: 'p2' }),
    ];
    assert.deepEqual(kinds(checkSlowTakeover(historyOf(events))), ['slow-takeover']);
    const excused = historyOf(events, {
      faults: [{ type: 'pg-restart', target: null, startedAt: 3_000, endedAt: 5_000 }],
    });
    assert.deepEqual(checkSlowTakeover(excused), []);
    const quick = [
      events[0]!,
      leaseOp('acquire', 'b', 2, 2_700, 4_200, { ...election, proc: 'p2' }),
    ];
    assert.deepEqual(checkSlowTakeover(historyOf(quick)), []);
  });

  it('job outcome: reports a job left pending, completed twice, or dead with an effect', () => {
    const facts = {
      jobs: [
        { id: 1, status: 'completed', generation: 1 },
        { id: 2, status: 'pending', generation: 0 },
        { id: 3, status: 'completed', generation: 2 },
        { id: 4, status: 'dead', generation: 10 },
      ],
      effects: [
        { jobId: 1, generation: 1, worker: 'w' },
        { jobId: 3, generation: 1, worker: 'w1' },
        { jobId: 3, generation: 2, worker: 'w2' },
      ],
    };
    const messages = checkJobOutcome(historyOf([], { facts })).map((v) => v.message);
    assert.deepEqual(messages, [
      'job 2: pending with 0 accepted completion(s)',
      'job 3: completed with 2 accepted completion(s)',
    ]);
  });

  it('superseded completion: reports a completion accepted from an older generation', () => {
    const facts = {
      jobs: [{ id: 3, status: 'completed', generation: 2 }],
      effects: [{ jobId: 3, generation: 1, worker: 'w1' }],
    };
    const events = [
      { type: 'job' as const, phase: 'complete-ok' as const, jobId: 3, generation: 1 },
    ];
    assert.deepEqual(kinds(checkSupersededCompletion(historyOf(events, { facts }))), [
      'superseded-completion',
      'superseded-completion',
    ]);
    const fine = { jobs: facts.jobs, effects: [{ jobId: 3, generation: 2, worker: 'w2' }] };
    assert.deepEqual(checkSupersededCompletion(historyOf([], { facts: fine })), []);
  });

  it('slot once: reports a slot run twice', () => {
    const twice = historyOf([], {
      facts: {
        scheduleRuns: [
          { name: 's', slot: 1_000, proc: 'a' },
          { name: 's', slot: 1_000, proc: 'b' },
          { name: 's', slot: 2_000, proc: 'a' },
        ],
      },
    });
    assert.deepEqual(kinds(checkSlotOnce(twice)), ['slot-twice']);
    const reported = historyOf([
      { type: 'slot', name: 's', slot: 1_000, token: 1, proc: 'a' },
      { type: 'slot', name: 's', slot: 1_000, token: 2, proc: 'b' },
    ]);
    assert.deepEqual(kinds(checkSlotOnce(reported)), ['slot-twice']);
  });

  it('step once: reports a step applied twice, by a stale generation, a parent before its children, and a workflow left unfinished', () => {
    const row = (jobId: number, step: string, generation: number, seen = generation) => ({
      jobId,
      step,
      generation,
      seenGeneration: seen,
      unfinishedChildren: null,
    });
    const fine = historyOf([], {
      facts: {
        steps: [
          row(1, 'one', 1),
          row(1, 'two', 2),
          { ...row(2, 'gather', 1), unfinishedChildren: 0 },
        ],
        workflowJobs: [
          { id: 1, status: 'completed', generation: 2 },
          { id: 2, status: 'dead', generation: 1 },
        ],
      },
    });
    assert.deepEqual(checkStepOnce(fine), []);
    const broken = historyOf([], {
      facts: {
        steps: [
          row(1, 'one', 1),
          row(1, 'one', 2),
          row(3, 'two', 1, 2),
          { ...row(4, 'gather', 1), unfinishedChildren: 2 },
        ],
        workflowJobs: [{ id: 5, status: 'processing', generation: 1 }],
      },
    });
    const found = checkStepOnce(broken);
    assert.deepEqual(kinds(found), ['step-once', 'step-once', 'step-once', 'job-outcome']);
    assert.match(found.map((v) => v.message).join('\n'), /step one applied 2 times/);
    assert.match(
      found.map((v) => v.message).join('\n'),
      /job 3: step two applied by generation 1 while the job was at generation 2/,
    );
    assert.match(found.map((v) => v.message).join('\n'), /job 4: the flow parent ran with 2 child/);
  });

  it('acknowledged, then lost: reports an acknowledged enqueue, completion, term or token the database no longer has', () => {
    const events = [
      { type: 'enqueue-ack' as const, jobIds: [1, 2], proc: 'producer' },
      { type: 'job' as const, phase: 'complete-ok' as const, jobId: 1, generation: 1 },
      leaseOp('acquire', 'a', 7, 1_000, 2_000),
      leaseOp('renew', 'a', 7, 1_500, 2_500),
      leaseOp('acquire', 'b', 3, 1_000, 2_000, { family: 'lock', resource: 'l' }),
      {
        type: 'session-term' as const,
        resource: 's',
        holder: 'a',
        token: 9,
        phase: 'granted' as const,
      },
    ];
    const kept = {
      jobs: [
        { id: 1, status: 'completed', generation: 1 },
        { id: 2, status: 'pending', generation: 0 },
      ],
      effects: [{ jobId: 1, generation: 1, worker: 'w' }],
      storedTokens: [
        { family: 'lease' as const, resource: 'r', token: 8 },
        { family: 'lock' as const, resource: 'l', token: 3 },
        { family: 'session' as const, resource: '*', token: 40 },
      ],
    };
    assert.deepEqual(checkAcknowledgedLost(historyOf(events, { facts: kept })), []);
    // After a crash that lost them: job 2 never existed, job 1's completion vanished and the job
    // ran again (completed by generation 2), the lease row went back to token 6, the lock row is
    // gone, and the session sequence is behind the token it handed out.
    const lostFacts = {
      jobs: [{ id: 1, status: 'completed', generation: 2 }],
      effects: [{ jobId: 1, generation: 2, worker: 'w2' }],
      storedTokens: [
        { family: 'lease' as const, resource: 'r', token: 6 },
        { family: 'session' as const, resource: '*', token: 8 },
      ],
    };
    const messages = checkAcknowledgedLost(historyOf(events, { facts: lostFacts })).map(
      (v) => v.message,
    );
    assert.deepEqual(messages, [
      'job 2 was acknowledged as enqueued but does not exist',
      "job 1: completion of generation 1 was acknowledged but the job is completed without that generation's effect",
      'lease:r: acquire of token 7 by a was acknowledged but the stored token is 6',
      'lease:r: renew of token 7 by a was acknowledged but the stored token is 6',
      'lock:l: acquire of token 3 by b was acknowledged but the stored token is missing',
      'session:s: token 9 (sequence value 9) was granted to a but the token sequence stands at 8',
    ]);
  });

  it('leaks: reports connections, advisory locks and processes left behind', () => {
    const leaky = historyOf([], {
      facts: {
        leakedConnections: [{ pid: 42, application: 'leasehold', state: 'idle' }],
        leakedAdvisoryLocks: 1,
        leakedProcesses: [{ proc: 'holder-1', pid: 4242 }],
      },
    });
    assert.deepEqual(kinds(checkLeaks(leaky)), ['leak', 'leak', 'leak']);
    assert.deepEqual(checkLeaks(historyOf([])), []);
  });

  describe('limit exceeded', () => {
    const capped = (concurrency: number) => [
      { queue: 'q', concurrency, perKeyConcurrency: 1, rate: null },
    ];

    it('passes runs that stay within the cap, a claim at the instant a run ended included', () => {
      const clean = historyOf(
        [
          jobClaim(1, 1_000, 2_200),
          jobClaim(2, 1_100, 2_300),
          jobClaim(3, 1_200, 2_400),
          jobCompleted(2, 1_500),
          jobClaim(4, 1_500, 2_700),
          jobCompleted(1, 1_800),
          jobCompleted(3, 1_900),
          jobCompleted(4, 2_000),
        ],
        { limits: capped(3) },
      );
      assert.deepEqual(checkLimitExceeded(clean), []);
      // Without limits, nothing is judged.
      assert.deepEqual(checkLimitExceeded(historyOf(clean.events)), []);
    });

    it('reports more runs in flight than the cap, with the instant, the jobs and the holders', () => {
      const overlapping = historyOf(
        [
          jobClaim(1, 1_000, 2_200),
          jobClaim(2, 1_100, 2_300),
          jobClaim(3, 1_200, 2_400),
          jobClaim(4, 1_300, 2_500, { worker: 'worker-2#0' }),
          jobClaim(5, 1_350, 2_550),
          jobCompleted(1, 1_400),
          jobCompleted(2, 1_450),
          // Back to the cap, then above it again at 1,600: a second violation (job 7 adds to it).
          jobClaim(6, 1_600, 2_800),
          jobClaim(7, 1_700, 2_900),
        ],
        { limits: capped(3) },
      );
      const violations = checkLimitExceeded(overlapping);
      assert.deepEqual(kinds(violations), ['limit-exceeded', 'limit-exceeded']);
      assert.equal(
        violations[0]!.message,
        `q: 4 runs in flight at ${new Date(1_300).toISOString()}, concurrency 3: ` +
          'job 1#1 by w1, job 2#1 by w2, job 3#1 by w3, job 4#1 by worker-2#0',
      );
      assert.match(
        violations[1]!.message,
        /^q: 4 runs in flight at .*Z, concurrency 3: job 3#1 by w3, .*job 6#1 by w6$/,
      );
    });

    it('a stalled worker no longer counts once its lease expired; a renewal it got extends it', () => {
      // Job 1's worker froze at once: no outcome, its lease expired at 1,200 (the rescuer and
      // job 2's claim came after). Its late completion of generation 1 is refused by the fence
      // (no complete-ok), and is no outcome either.
      const stalled = historyOf(
        [
          jobClaim(1, 0, 1_200, { worker: 'frozen' }),
          jobClaim(2, 1_500, 2_700, { worker: 'other' }),
          { type: 'job', phase: 'complete-refused', jobId: 1, generation: 1 },
          jobCompleted(2, 2_000),
        ],
        { limits: capped(1) },
      );
      assert.deepEqual(checkLimitExceeded(stalled), []);
      assert.deepEqual(
        jobRuns(stalled.events).map((r) => [r.jobId, r.dbEnd, r.endedBy]),
        [
          [1, 1_200, 'lease-expiry'],
          [2, 2_000, 'completion'],
        ],
      );
      // Had it renewed to 2,000 before freezing, it was still a valid holder at 1,500.
      const renewed = historyOf(
        [
          jobClaim(1, 0, 1_200, { worker: 'frozen' }),
          { type: 'job-renew', jobId: 1, generation: 1, dbLeaseExpiresAt: 2_000 },
          jobClaim(2, 1_500, 2_700, { worker: 'other' }),
        ],
        { limits: capped(1) },
      );
      assert.deepEqual(kinds(checkLimitExceeded(renewed)), ['limit-exceeded']);
    });

    it('a claim that waited for a finishing run counts from its answer, not its statement start', () => {
      // Job 2's claim statement began at 1,000 (its claimedAt) but waited on job 1's
      // completing transaction, whose COMMIT freed the slot after 1,200; its answer came at
      // 1,300. It held nothing before that commit.
      const waited = historyOf(
        [jobClaim(1, 0, 5_000), jobCompleted(1, 1_200), { ...jobClaim(2, 1_000, 2_200), t: 1_300 }],
        { limits: capped(1) },
      );
      assert.deepEqual(checkLimitExceeded(waited), []);
    });

    it('a failure sent on the wall clock ends the run then, less the offset slack', () => {
      const failed = historyOf(
        [
          jobClaim(1, 0, 5_000),
          { type: 'job-outcome-invoke', op: 'fail', jobId: 1, generation: 1, t: 900 },
          jobClaim(2, 1_000, 2_000),
        ],
        { limits: capped(1) },
      );
      assert.deepEqual(checkLimitExceeded(failed), []);
      // Offset: the database clock is 500 ms ahead of the wall clock, so the failure was sent at
      // 1,400 on it, after job 2's claim.
      const ahead = { ...failed, bounds: { ...failed.bounds, dbClockOffsetMs: 500 } };
      assert.deepEqual(kinds(checkLimitExceeded(ahead)), ['limit-exceeded']);
    });

    it('per key: reports more runs of one key than perKeyConcurrency, not of several keys', () => {
      const limits = [{ queue: 'q', concurrency: null, perKeyConcurrency: 2, rate: null }];
      const events = [
        jobClaim(1, 1_000, 2_000, { key: 'a' }),
        jobClaim(2, 1_100, 2_100, { key: 'a' }),
        jobClaim(3, 1_200, 2_200, { key: 'b' }),
        jobClaim(4, 1_300, 2_300, { key: 'b' }),
      ];
      assert.deepEqual(checkLimitExceeded(historyOf(events, { limits })), []);
      const third = historyOf([...events, jobClaim(5, 1_400, 2_400, { key: 'a' })], { limits });
      const violations = checkLimitExceeded(third);
      assert.deepEqual(kinds(violations), ['limit-exceeded']);
      assert.match(violations[0]!.message, /^q key a: 3 runs in flight .*perKeyConcurrency 2/);
    });

    it('rate: reports a window (t - per, t] with more claims than the limit', () => {
      const limits = [
        { queue: 'q', concurrency: null, perKeyConcurrency: 1, rate: { limit: 2, per: 1_000 } },
      ];
      // 0 has left the window of 1,000: (0, 1,000] holds 500 and 1,000.
      const exact = [jobClaim(1, 0, 100), jobClaim(2, 500, 600), jobClaim(3, 1_000, 1_100)];
      assert.deepEqual(checkLimitExceeded(historyOf(exact, { limits })), []);
      const early = [jobClaim(1, 0, 100), jobClaim(2, 500, 600), jobClaim(3, 999, 1_100)];
      const violations = checkLimitExceeded(historyOf(early, { limits }));
      assert.deepEqual(kinds(violations), ['limit-exceeded']);
      assert.match(violations[0]!.message, /^q: 3 claims in the 1000 ms up to .*rate limit 2/);
      // One claim of three jobs at one instant is three starts.
      const batch = [jobClaim(1, 0, 100), jobClaim(2, 0, 100), jobClaim(3, 0, 100)];
      assert.deepEqual(kinds(checkLimitExceeded(historyOf(batch, { limits }))), ['limit-exceeded']);
    });
  });
});
