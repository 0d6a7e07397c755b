// The linearizability checker over recorded chaos histories (checkers/linearizable.ts): how the
// recording's events become operations (invoke + answer, refusals, errors, calls never answered,
// fenced increments and the ledger's last write), and that a history the rule checkers would
// also flag is not linearizable, with its window named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkLinearizability } from '../checkers/linearizable.js';
import { historyOf } from '../history-builder.js';
import type {
  ChildEventBody,
  FaultRecord,
  History,
  LeaseOpKind,
  LedgerFact,
  PromotionRecord,
} from '../history.js';
import { operationsOf } from './from-history.js';

type Stamped = ChildEventBody & { t: number; proc?: string };

let nextCall = 0;

/** A lease call as the recording engine writes it: the invoke at `call`, the answer at `ret`. */
function call(
  op: LeaseOpKind,
  holder: string,
  at: { call: number; ret?: number },
  answer:
    { token: number; dbAt: number; dbExpiresAt: number } | 'refused' | { error: string } | 'none',
  more: { requestedToken?: number; resource?: string; family?: 'lease' | 'lock' } = {},
): Stamped[] {
  const callId = ++nextCall;
  const family = more.family ?? 'lease';
  const resource = more.resource ?? 'r';
  const invoke: Stamped = {
    type: 'lease-invoke',
    family,
    op,
    resource,
    holder,
    callId,
    t: at.call,
    ...(more.requestedToken !== undefined ? { requestedToken: more.requestedToken } : {}),
    ...(op !== 'release' ? { ttlMs: 1_000 } : {}),
  };
  if (answer === 'none') return [invoke];
  const base = { type: 'lease-op' as const, family, op, resource, holder, callId };
  const t = at.ret ?? at.call + 5;
  if (answer === 'refused') return [invoke, { ...base, invokedAt: at.call, ok: false, t }];
  if ('error' in answer)
    return [invoke, { ...base, invokedAt: at.call, ok: false, error: answer.error, t }];
  return [invoke, { ...base, invokedAt: at.call, ok: true, ...answer, t }];
}

function increment(
  opId: string,
  scope: string,
  token: number,
  at: { call: number; ret: number },
  outcome: 'ok' | 'stale_token' | 'ECONNRESET' | 'none',
): Stamped[] {
  const invoke: Stamped = { type: 'increment', phase: 'invoke', scope, opId, token, t: at.call };
  if (outcome === 'none') return [invoke];
  if (outcome === 'ok')
    return [invoke, { type: 'increment', phase: 'ok', scope, opId, token, t: at.ret }];
  return [
    invoke,
    { type: 'increment', phase: 'fail', scope, opId, token, error: outcome, t: at.ret },
  ];
}

function history(events: Stamped[][], ledger: LedgerFact[] = []): History {
  return historyOf(
    events.flat().sort((a, b) => a.t - b.t),
    { facts: { ledger } },
  );
}

describe('chaos histories as operations', () => {
  it('pairs invokes with answers: grants, refusals, errors and calls never answered', () => {
    const h = history([
      call('acquire', 'a', { call: 10 }, { token: 1, dbAt: 12, dbExpiresAt: 1_012 }),
      call('acquire', 'b', { call: 20 }, 'refused'),
      call('renew', 'a', { call: 30 }, { error: 'ECONNRESET' }, { requestedToken: 1 }),
      call('release', 'a', { call: 40 }, 'none', { requestedToken: 1 }),
    ]);
    const { leases, locks } = operationsOf(h);
    assert.equal(locks.length, 0);
    assert.deepEqual(
      leases.map((op) => [op.input.kind, op.unknown ? 'unknown' : op.output?.kind]),
      [
        ['acquire', 'acquired'],
        ['acquire', 'busy'],
        ['renew', 'unknown'],
        ['release', 'unknown'],
      ],
    );
    const report = checkLinearizability(h);
    assert.equal(report.stats.verdict, 'ok');
    assert.equal(report.stats.operations, 4);
    assert.equal(report.stats.unknown, 2);
  });

  it('a correct run of terms, takeovers and fenced increments is linearizable', () => {
    const h = history(
      [
        call('acquire', 'a', { call: 0 }, { token: 1, dbAt: 1, dbExpiresAt: 1_001 }),
        increment('a1', 'lease:r', 1, { call: 10, ret: 20 }, 'ok'),
        call(
          'renew',
          'a',
          { call: 30 },
          { token: 1, dbAt: 31, dbExpiresAt: 1_031 },
          { requestedToken: 1 },
        ),
        // a froze past its expiry: b takes over, a's late renew and increment are refused.
        call('acquire', 'b', { call: 1_100 }, { token: 2, dbAt: 1_101, dbExpiresAt: 2_101 }),
        increment('b1', 'lease:r', 2, { call: 1_110, ret: 1_120 }, 'ok'),
        call('renew', 'a', { call: 1_130 }, 'refused', { requestedToken: 1 }),
        increment('a2', 'lease:r', 1, { call: 1_140, ret: 1_150 }, 'stale_token'),
        increment('a3', 'lease:r', 1, { call: 1_160, ret: 1_170 }, 'ECONNRESET'),
        call(
          'release',
          'b',
          { call: 1_200 },
          { token: 2, dbAt: 1_201, dbExpiresAt: 1_201 },
          { requestedToken: 2 },
        ),
      ],
      [
        { seq: 1, scope: 'lease:r', opId: 'a1', token: 1 },
        { seq: 2, scope: 'lease:r', opId: 'b1', token: 2 },
      ],
    );
    const report = checkLinearizability(h);
    assert.deepEqual(report.violations, []);
    // a3 failed before COMMIT: nothing to check. The ledger adds one final read.
    assert.equal(operationsOf(h).registers.length, 4);
  });

  it('two holders granted the lease at once on the database clock: not linearizable', () => {
    const h = history([
      call('acquire', 'a', { call: 0 }, { token: 1, dbAt: 1, dbExpiresAt: 1_001 }),
      call('acquire', 'b', { call: 500 }, { token: 2, dbAt: 501, dbExpiresAt: 1_501 }),
    ]);
    const { violations } = checkLinearizability(h);
    assert.equal(violations.length, 1);
    assert.equal(violations[0]!.kind, 'linearizability');
    assert.match(violations[0]!.message, /lease history not linearizable \(2 operations\)/);
    assert.match(violations[0]!.message, /acquire\(b, ttl 1000\)/);
    assert.match(String(violations[0]!.evidence), /must be placed by its return, and cannot be/);
  });

  it('a token handed out again after a crash: not linearizable', () => {
    const h = history([
      call('acquire', 'a', { call: 0 }, { token: 7, dbAt: 1, dbExpiresAt: 1_001 }),
      call(
        'release',
        'a',
        { call: 10 },
        { token: 7, dbAt: 11, dbExpiresAt: 11 },
        { requestedToken: 7 },
      ),
      call('acquire', 'b', { call: 5_000 }, { token: 7, dbAt: 5_001, dbExpiresAt: 6_001 }),
    ]);
    assert.equal(checkLinearizability(h).stats.verdict, 'illegal');
  });

  it('a fenced write accepted under an older token, or a ledger that ends elsewhere: not linearizable', () => {
    const older = history([
      increment('x', 'lease:r', 2, { call: 0, ret: 10 }, 'ok'),
      increment('y', 'lease:r', 1, { call: 20, ret: 30 }, 'ok'),
    ]);
    assert.match(
      checkLinearizability(older).violations[0]!.message,
      /fenced register history not linearizable/,
    );
    const ledger = history(
      [
        increment('x', 'lease:r', 1, { call: 0, ret: 10 }, 'ok'),
        increment('y', 'lease:r', 2, { call: 20, ret: 30 }, 'ok'),
      ],
      [
        { seq: 2, scope: 'lease:r', opId: 'x', token: 1 },
        { seq: 1, scope: 'lease:r', opId: 'y', token: 2 },
      ],
    );
    assert.equal(checkLinearizability(ledger).stats.verdict, 'illegal');
  });

  it('lease locks may refuse a free resource (a closed gap), but never grant a held one', () => {
    const lock = { family: 'lock' as const };
    const refusal = history([
      call('acquire', 'a', { call: 0 }, { token: 1, dbAt: 1, dbExpiresAt: 1_001 }, lock),
      call(
        'release',
        'a',
        { call: 10 },
        { token: 1, dbAt: 11, dbExpiresAt: 11 },
        { ...lock, requestedToken: 1 },
      ),
      call('acquire', 'b', { call: 20 }, 'refused', lock),
    ]);
    assert.equal(checkLinearizability(refusal).stats.verdict, 'ok');
    const overlap = history([
      call('acquire', 'a', { call: 0 }, { token: 1, dbAt: 1, dbExpiresAt: 1_001 }, lock),
      call('acquire', 'b', { call: 20 }, { token: 2, dbAt: 21, dbExpiresAt: 1_021 }, lock),
    ]);
    assert.equal(checkLinearizability(overlap).stats.verdict, 'illegal');
  });
});

describe('asynchronous failovers', () => {
  const failover = (at: number): FaultRecord => {
    const promotion: PromotionRecord = {
      kind: 'failover',
      at,
      from: 'a',
      to: 'b',
      timeline: 2,
      unavailableMs: 9_000,
    };
    return { type: 'failover', target: null, startedAt: at, endedAt: at + 10_000, promotion };
  };
  const lossy = (events: Stamped[][]): History => ({
    ...historyOf(
      events.flat().sort((a, b) => a.t - b.t),
      { faults: [failover(10_000)] },
    ),
    replication: 'async',
  });

  it('a grant the promotion forgot explains a later grant to another holder', () => {
    const h = lossy([
      call('acquire', 'a', { call: 9_000 }, { token: 1, dbAt: 9_001, dbExpiresAt: 30_000 }),
      // After the quarantine, on the promoted standby, in the next epoch.
      call(
        'acquire',
        'b',
        { call: 20_000 },
        { token: 2 ** 32 + 1, dbAt: 20_001, dbExpiresAt: 21_001 },
      ),
    ]);
    assert.equal(checkLinearizability(h).stats.verdict, 'ok');
    // The same history in a synchronous run is a lost acknowledgement: not linearizable.
    assert.equal(checkLinearizability({ ...h, replication: 'sync' }).stats.verdict, 'illegal');
  });

  it('but the forgotten grant still counts: its token handed out again is not linearizable', () => {
    const h = lossy([
      call('acquire', 'a', { call: 9_000 }, { token: 5, dbAt: 9_001, dbExpiresAt: 10_500 }),
      call('acquire', 'b', { call: 25_000 }, { token: 5, dbAt: 25_001, dbExpiresAt: 26_001 }),
    ]);
    assert.equal(checkLinearizability(h).stats.verdict, 'illegal');
  });
});
