// Trust deadlines of a worker's jobs: one timer per distinct deadline, the lazy signal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { LeaseLostError } from '../../src/core/errors.js';
import type { Job } from '../../src/core/types.js';
import { JobRun } from '../../src/queue/job-run.js';
import { TrustDeadlines } from '../../src/queue/trust-deadlines.js';

const TTL = 1_000;
const MARGIN = 100;

function setup() {
  const clock = new ManualClock();
  const deadlines = new TrustDeadlines<JobRun>(clock, TTL, MARGIN);
  const run = (id: number, sentAt = clock.monotonic()) =>
    new JobRun({ id, generation: 1, attempts: 1 } as Job, deadlines, clock.monotonic(), sentAt);
  return { clock, deadlines, run };
}

describe('TrustDeadlines', () => {
  it('keeps one timer for a batch claimed together, and fires every member at ttl - margin', async () => {
    const { clock, deadlines, run } = setup();
    const runs = Array.from({ length: 50 }, (_, i) => run(i + 1));
    assert.equal(deadlines.timers, 1);
    assert.equal(clock.pendingTimers(), 1);
    await clock.advance(TTL - MARGIN - 1);
    assert.ok(runs.every((r) => !r.lost));
    await clock.advance(1);
    assert.ok(runs.every((r) => r.lost));
    assert.ok(runs.every((r) => r.lostReason instanceof LeaseLostError));
    assert.equal(deadlines.timers, 0);
  });

  it('moves a confirmed run to its new deadline and leaves the others to theirs', async () => {
    const { clock, deadlines, run } = setup();
    const [a, b] = [run(1), run(2)];
    await clock.advance(500);
    a.confirm(clock.monotonic()); // a renewal sent now succeeded for a only
    assert.equal(deadlines.timers, 2);
    await clock.advance(400); // b's deadline (900) passes, a's (1,400) does not
    assert.equal(b.lost, true);
    assert.equal(a.lost, false);
    assert.equal(deadlines.timers, 1);
    await clock.advance(500);
    assert.equal(a.lost, true);
  });

  it('cancels a deadline whose runs all finished', async () => {
    const { clock, deadlines, run } = setup();
    const runs = [run(1), run(2), run(3)];
    for (const r of runs) r.finish();
    assert.equal(deadlines.timers, 0);
    assert.equal(clock.pendingTimers(), 0);
    await clock.advance(TTL);
    assert.ok(runs.every((r) => !r.lost));
  });

  it('fires a signal taken early, and gives a signal taken late already aborted with the reason', async () => {
    const { clock, run } = setup();
    const early = run(1);
    const late = run(2);
    const signal = early.signal;
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    await clock.advance(TTL);
    assert.equal(fired, 1);
    assert.ok(signal.reason instanceof LeaseLostError);
    assert.equal(late.signal.aborted, true);
    assert.equal(late.signal.reason, late.lostReason);
  });

  it('keeps the first reason when a run is lost twice, and ignores confirmations after', async () => {
    const { clock, deadlines, run } = setup();
    const r = run(1);
    const first = new Error('renewal did not return the job');
    r.abort(first);
    r.abort(new Error('second'));
    r.confirm(clock.monotonic());
    assert.equal(r.lostReason, first);
    assert.equal(deadlines.timers, 0);
  });
});
