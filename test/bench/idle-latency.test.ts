/**
 * The interleaved idle-latency probe (bench/lib/idle-latency.ts) with stand-in systems whose
 * "worker" starts a job a known time after its enqueue: each system's figures must be its own,
 * every system set up before the first sample and torn down after the last, in reverse.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interleavedIdleLatency, type IdleSetup } from '../../bench/lib/idle-latency.js';

function standIn(name: string, delayMs: number, log: string[], stray?: () => void): IdleSetup {
  return async (started, use) => {
    log.push(`up ${name}`);
    try {
      return await use(async (i) => {
        log.push(`${name} ${i}`);
        // A start reported by another system while this one is timed must not count for it.
        stray?.();
        setTimeout(started, delayMs);
      });
    } finally {
      log.push(`down ${name}`);
    }
  };
}

describe('the interleaved idle-latency probe', () => {
  it('times each system on its own, sampled in turn with the order rotating', async () => {
    const log: string[] = [];
    let fastStarted: (() => void) | undefined;
    const fast: IdleSetup = (started, use) => {
      fastStarted = started;
      return standIn('fast', 1, log)(started, use);
    };
    // The slow system reports the fast one's start at once: a probe that took any start as
    // the one it waits for would time the slow system at about 0 ms.
    const slow = standIn('slow', 60, log, () => fastStarted?.());
    const [f, s] = await interleavedIdleLatency([fast, slow], 3);
    // Lower bounds only: a timer never fires early, but a loaded machine may fire it late.
    assert.ok(s!.p50 >= 55, `slow p50 ${s!.p50}`);
    assert.ok(f!.p50 < s!.p50, `fast p50 ${f!.p50} against slow ${s!.p50}`);
    assert.deepEqual(log, [
      'up fast',
      'up slow',
      'fast 0',
      'slow 0',
      'slow 1',
      'fast 1',
      'fast 2',
      'slow 2',
      'down slow',
      'down fast',
    ]);
  });
});
