// The line of jobs a worker claims ahead of a free slot (decision 0277), on a ManualClock: it
// opens only while handlers are shorter than claims, keeps its order, gives every waiting job
// back once the oldest has waited AHEAD_WAIT_MS, and after that stays shut until handlers are
// short again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { AHEAD_WAIT_MS, ClaimAhead } from '../../src/queue/claim-ahead.js';
import type { JobRun } from '../../src/queue/job-run.js';

/** The line only stores and returns runs: a labelled object stands in for one. */
function run(name: string): JobRun {
  return { name } as unknown as JobRun;
}

function line(options: { enabled?: boolean; most?: number } = {}) {
  const clock = new ManualClock();
  const stalled: JobRun[][] = [];
  const ahead = new ClaimAhead({
    enabled: options.enabled ?? true,
    most: options.most ?? 4,
    clock,
    stalled: (runs) => stalled.push(runs),
  });
  return { clock, ahead, stalled };
}

describe('ClaimAhead', () => {
  it('has no room until both a handler and a claim were measured', () => {
    const { ahead } = line();
    assert.equal(ahead.room, 0);
    ahead.claimTook(5);
    assert.equal(ahead.room, 0, 'no handler measured yet');
    ahead.handlerTook(1);
    assert.equal(ahead.room, 4);
  });

  it('has room only while handlers are shorter than claims', () => {
    const { ahead } = line();
    ahead.claimTook(5);
    ahead.handlerTook(20);
    assert.equal(ahead.room, 0, 'handlers longer than claims');
    const other = line().ahead;
    other.claimTook(5);
    other.handlerTook(5);
    assert.equal(other.room, 0, 'equal: claiming ahead would not help');
  });

  it('has none when disabled, whatever the durations', () => {
    const { ahead } = line({ enabled: false });
    ahead.claimTook(5);
    ahead.handlerTook(0.1);
    assert.equal(ahead.room, 0);
  });

  it('counts held jobs against its room, below zero when durations shut it', () => {
    const { ahead } = line({ most: 2 });
    ahead.claimTook(5);
    ahead.handlerTook(1);
    ahead.push(run('a'));
    assert.equal(ahead.room, 1);
    ahead.push(run('b'));
    assert.equal(ahead.room, 0);
    // One long handler pulls the average above the claim's.
    ahead.handlerTook(100);
    assert.equal(ahead.room, -2);
  });

  it('hands jobs out oldest first, and undefined when empty', () => {
    const { ahead } = line({ most: 200 });
    const names: string[] = [];
    for (let i = 0; i < 150; i++) ahead.push(run(`j${i}`));
    for (let r = ahead.shift(); r; r = ahead.shift())
      names.push((r as unknown as { name: string }).name);
    assert.deepEqual(
      names,
      Array.from({ length: 150 }, (_, i) => `j${i}`),
    );
    assert.equal(ahead.length, 0);
    assert.equal(ahead.shift(), undefined);
  });

  it('gives every waiting job back once the oldest waited its time, and shuts', async () => {
    const { clock, ahead, stalled } = line();
    ahead.claimTook(5);
    ahead.handlerTook(1);
    ahead.push(run('a'));
    await clock.advance(AHEAD_WAIT_MS / 2);
    ahead.push(run('b'));
    await clock.advance(AHEAD_WAIT_MS / 2 - 1);
    assert.equal(stalled.length, 0, 'not yet');
    await clock.advance(1);
    assert.equal(stalled.length, 1);
    assert.deepEqual(
      stalled[0]!.map((r) => (r as unknown as { name: string }).name),
      ['a', 'b'],
      'both, the younger too',
    );
    assert.equal(ahead.length, 0);
    assert.equal(ahead.room, 0, 'the wait counts as a long handler');
    assert.equal(clock.pendingTimers(), 0);
  });

  it('measures the wait from the oldest still waiting', async () => {
    const { clock, ahead, stalled } = line();
    ahead.push(run('a'));
    await clock.advance(60);
    ahead.push(run('b'));
    ahead.shift(); // a got its slot
    await clock.advance(AHEAD_WAIT_MS - 60);
    assert.equal(stalled.length, 0, 'b has waited only 40 ms');
    await clock.advance(60);
    assert.equal(stalled.length, 1);
    assert.equal((stalled[0]![0] as unknown as { name: string }).name, 'b');
  });

  it('stops its timer when the line empties', async () => {
    const { clock, ahead, stalled } = line();
    ahead.push(run('a'));
    ahead.shift();
    assert.equal(clock.pendingTimers(), 0);
    await clock.advance(AHEAD_WAIT_MS * 2);
    assert.equal(stalled.length, 0);
  });

  it('close answers every waiting job and never opens again', () => {
    const { clock, ahead, stalled } = line();
    ahead.claimTook(5);
    ahead.handlerTook(1);
    ahead.push(run('a'));
    ahead.push(run('b'));
    const taken = ahead.close();
    assert.equal(taken.length, 2);
    assert.equal(ahead.length, 0);
    assert.equal(ahead.room, 0);
    ahead.handlerTook(0.1);
    assert.equal(ahead.room, 0, 'closed for good');
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(stalled.length, 0);
  });
});
