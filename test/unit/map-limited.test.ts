// mapLimited: answers in item order, never more than `limit` calls at once, and on a failure
// nothing new started, the running calls awaited, the first error thrown.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mapLimited } from '../../src/runtime/map-limited.js';

/** Calls that finish only when the test says so, with a log of starts and the most running. */
function heldCalls() {
  const pending = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  const started: number[] = [];
  let running = 0;
  let mostRunning = 0;
  const fn = (item: number): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      started.push(item);
      mostRunning = Math.max(mostRunning, ++running);
      pending.set(item, {
        resolve: (v) => (running--, resolve(v)),
        reject: (e) => (running--, reject(e)),
      });
    });
  const settle = async (item: number, outcome: string | Error): Promise<void> => {
    // Let the runners reach their next await first.
    for (let i = 0; i < 5 && !pending.has(item); i++) await Promise.resolve();
    const call = pending.get(item);
    assert.ok(call, `item ${item} was started`);
    pending.delete(item);
    if (outcome instanceof Error) call.reject(outcome);
    else call.resolve(outcome);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { fn, settle, started, pending, mostRunning: () => mostRunning };
}

describe('mapLimited', () => {
  it('answers in item order however the calls finish, with at most `limit` running', async () => {
    const calls = heldCalls();
    const all = mapLimited([0, 1, 2, 3, 4], 2, calls.fn);
    await calls.settle(1, 'b');
    await calls.settle(2, 'c');
    await calls.settle(0, 'a');
    await calls.settle(4, 'e');
    await calls.settle(3, 'd');
    assert.deepEqual(await all, ['a', 'b', 'c', 'd', 'e']);
    assert.equal(calls.mostRunning(), 2);
    assert.deepEqual(calls.started, [0, 1, 2, 3, 4]);
  });

  it('runs one at a time with limit 1', async () => {
    const calls = heldCalls();
    const all = mapLimited([0, 1, 2], 1, calls.fn);
    for (const item of [0, 1, 2]) await calls.settle(item, String(item));
    assert.deepEqual(await all, ['0', '1', '2']);
    assert.equal(calls.mostRunning(), 1);
  });

  it('on a failure starts nothing more, waits for the running call, and throws the first error', async () => {
    const calls = heldCalls();
    let settled = false;
    const all = mapLimited([0, 1, 2, 3], 2, calls.fn).finally(() => (settled = true));
    await calls.settle(0, new Error('first'));
    assert.deepEqual(calls.started, [0, 1], 'nothing started after the failure');
    assert.equal(settled, false, 'still waiting for the call that was running');
    await calls.settle(1, new Error('second'));
    await assert.rejects(all, /first/);
    assert.deepEqual(calls.started, [0, 1]);
  });

  it('answers an empty list at once', async () => {
    assert.deepEqual(await mapLimited([], 3, async () => 1), []);
  });
});
