// The search on its own, with the simplest model (a register: write v, read -> v), on the
// classic histories of Porcupine's tests, and its reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkOperations,
  checkPartition,
  formatFailure,
  type Model,
  type Operation,
} from './search.js';

type In = { kind: 'write'; value: number } | { kind: 'read' };
const register: Model<number, In, number> = {
  init: () => 0,
  step: (s, input, output) =>
    input.kind === 'write'
      ? { ok: true, state: input.value }
      : { ok: output === undefined || output === s, state: s },
  hash: (s) => String(s),
  equal: (a, b) => a === b,
  describe: (input, output) =>
    input.kind === 'write'
      ? `write ${input.value}`
      : `read -> ${output === undefined ? '?' : output}`,
};
const w = (client: string, call: number, ret: number, value: number): Operation<In, number> => ({
  client,
  call,
  ret,
  input: { kind: 'write', value },
  output: 0,
});
const r = (client: string, call: number, ret: number, value: number): Operation<In, number> => ({
  client,
  call,
  ret,
  input: { kind: 'read' },
  output: value,
});

describe('linearizability search', () => {
  it('accepts reads on both sides of an overlapping write', () => {
    const history = [w('c0', 0, 100, 100), r('c1', 25, 75, 100), r('c2', 30, 60, 0)];
    assert.equal(checkOperations(register, history).verdict, 'ok');
  });

  it('refuses an old value read after the new one was read, and says where', () => {
    const history = [w('c0', 0, 100, 200), r('c1', 10, 30, 200), r('c2', 40, 90, 0)];
    const result = checkPartition(
      register,
      history.map((o, id) => ({ ...o, id })),
    );
    assert.equal(result.verdict, 'illegal');
    assert.ok(result.verdict === 'illegal');
    assert.deepEqual(
      result.failure.longestPrefix.map((p) => p.id),
      [0, 1],
    );
    assert.equal(result.failure.blocking.id, 2);
    assert.deepEqual([result.failure.from, result.failure.to], [40, 90]);
    const text = formatFailure(result.failure);
    assert.match(text, /not linearizable in \[40, 90\]/);
    assert.match(text, /#2 c2 \[40, 90\] read -> 0/);
  });

  it('respects real time: a read that returned before a write was called cannot see it', () => {
    const history = [r('c1', 0, 10, 5), w('c0', 20, 30, 5)];
    assert.equal(checkOperations(register, history).verdict, 'illegal');
  });

  it('treats an unknown outcome as taking effect anywhere after its call, or never', () => {
    const unknownWrite: Operation<In, number> = {
      client: 'c0',
      call: 0,
      ret: 1,
      input: { kind: 'write', value: 7 },
      unknown: true,
    };
    const late = [unknownWrite, r('c1', 10, 11, 0), r('c1', 1000, 1001, 7)];
    assert.equal(checkOperations(register, late).verdict, 'ok');
    const never = [unknownWrite, r('c1', 10, 11, 0), r('c1', 1000, 1001, 0)];
    assert.equal(checkOperations(register, never).verdict, 'ok');
    const flipFlop = [unknownWrite, r('c1', 10, 11, 7), r('c1', 20, 21, 0)];
    assert.equal(checkOperations(register, flipFlop).verdict, 'illegal');
  });

  it('treats calls and returns at the same instant as overlapping', () => {
    const history = [w('c0', 0, 10, 1), r('c1', 10, 20, 0)];
    assert.equal(checkOperations(register, history).verdict, 'ok');
  });

  it('rejects an operation that returns before its call', () => {
    assert.throws(() => checkOperations(register, [w('c0', 10, 5, 1)]), /returns before its call/);
  });

  it('gives up with unknown past its time budget', () => {
    // Many concurrent writes of distinct values and a read nobody wrote: the search must refute
    // every order, which outlasts a 1 ms budget.
    const history = [
      ...Array.from({ length: 40 }, (_, i) => w(`c${i}`, 0, 100, i + 1)),
      r('x', 200, 201, 999),
    ];
    const result = checkOperations(register, history, { maxMillis: 1 });
    assert.equal(result.verdict, 'unknown');
  });

  it('an unknown write past its deadline can no longer explain a read', () => {
    const unknown = (call: number, value: number, deadline?: number): Operation<In, number> => ({
      client: 'c0',
      call,
      ret: Infinity,
      input: { kind: 'write', value },
      unknown: true,
      ...(deadline === undefined ? {} : { deadline }),
    });
    // Without a deadline the write may take effect at any time after its call.
    assert.equal(checkOperations(register, [unknown(0, 7), r('c1', 500, 510, 7)]).verdict, 'ok');
    // Its deadline before the read's call: it took effect before, or never. Both fit this read…
    assert.equal(
      checkOperations(register, [unknown(0, 7, 100), r('c1', 500, 510, 7)]).verdict,
      'ok',
    );
    // …but not a read of 0 after the deadline and a read of 7 later still.
    const history = [unknown(0, 7, 100), r('c1', 200, 210, 0), r('c1', 500, 510, 7)];
    assert.equal(checkOperations(register, history).verdict, 'illegal');
    assert.equal(
      checkOperations(
        register,
        history.map((o) => ({ ...o, deadline: undefined })),
      ).verdict,
      'ok',
    );
  });

  it('refutes an illegal history among hundreds of unanswered calls when they have deadlines', () => {
    const history: Operation<In, number>[] = [];
    // 400 unanswered writes of 0 or 1, about five in flight at a time, then a read of a value
    // nobody wrote. Without deadlines every one of them stays pending to the end, so refuting the
    // read means trying every subset of them: the search gives up; with deadlines it does not.
    for (let i = 0; i < 400; i++)
      history.push({
        client: `u${i}`,
        call: i * 20,
        ret: Infinity,
        input: { kind: 'write', value: i % 2 },
        unknown: true,
        deadline: i * 20 + 100,
      });
    history.push(w('c0', 9_000, 9_010, 1), r('c1', 9_020, 9_030, 2));
    const budget = { maxSteps: 2_000_000, maxMillis: 20_000 };
    assert.equal(checkOperations(register, history, budget).verdict, 'illegal');
    const unbounded = history.map((o) => ({ ...o, deadline: undefined }));
    assert.equal(
      checkOperations(register, unbounded, { maxSteps: 200_000, maxMillis: 20_000 }).verdict,
      'unknown',
    );
  });
});
