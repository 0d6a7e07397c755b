// The worker's claiming loop over the memory engine, each claim held in flight for a few ms:
// a backlog gets a second claim beside the first, never more slots than are free, and an
// idle queue never two claims at once.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { systemClock } from '../../src/core/clock.js';
import type { Job } from '../../src/core/types.js';
import type { Engine } from '../../src/engine/engine.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { Producer } from '../../src/queue/producer.js';

const CONCURRENCY = 40;

/** A memory engine whose claims take `claimMs` and are counted while out. */
function slowClaims(engine: MemoryEngine, claimMs: number) {
  const stats = { claims: 0, inFlight: 0, maxInFlight: 0, overlapsAfterShort: 0 };
  let lastWasShort = false;
  const wrapped = Object.create(engine) as Engine;
  wrapped.jobClaimBatch = async (p) => {
    stats.claims++;
    stats.inFlight++;
    if (stats.inFlight > 1 && lastWasShort) stats.overlapsAfterShort++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    try {
      await delay(claimMs);
      const jobs = await engine.jobClaimBatch(p);
      lastWasShort = jobs.length < p.limit;
      return jobs;
    } finally {
      stats.inFlight--;
    }
  };
  return { wrapped, stats };
}

function producer(engine: Engine, onJob: (job: Job) => void, slots: { active: number }) {
  return new Producer({
    engine,
    clock: systemClock,
    workerId: 'w1',
    queues: ['q'],
    leaseTtlMs: 30_000,
    pollIntervalMs: 10,
    cooldownMs: 0,
    maxBatch: 10,
    notifications: false,
    freeSlots: () => CONCURRENCY - slots.active,
    dispatch: onJob,
    onError: (error) => assert.fail(String(error)),
  });
}

describe('Producer', () => {
  it('keeps two claims out while a backlog lasts, and never holds more jobs than free slots', async () => {
    const engine = new MemoryEngine();
    await engine.jobEnqueue({
      jobs: Array.from({ length: 600 }, (_, i) => ({ queue: 'q', payload: { i }, maxAttempts: 3 })),
    });
    const { wrapped, stats } = slowClaims(engine, 5);
    const slots = { active: 0 };
    let maxActive = 0;
    const seen = new Set<number>();
    let p!: Producer;
    const all = new Promise<void>((resolve) => {
      p = producer(
        wrapped,
        (job) => {
          assert.ok(!seen.has(job.id), `job ${job.id} dispatched twice`);
          seen.add(job.id);
          slots.active++;
          maxActive = Math.max(maxActive, slots.active);
          // Each job runs 20-30 ms: the slots fill up, and free up while claims are out.
          setTimeout(
            () => {
              slots.active--;
              p.slotFreed();
              if (seen.size === 600 && slots.active === 0) resolve();
            },
            20 + (job.id % 11),
          );
        },
        slots,
      );
    });
    await p.start();
    await all;
    await p.stop();
    assert.equal(seen.size, 600);
    assert.equal(stats.maxInFlight, 2, 'a second claim went out beside the first');
    assert.ok(maxActive <= CONCURRENCY, `held ${maxActive} jobs with ${CONCURRENCY} slots`);
  });

  it('sends one claim at a time when the queue is empty', async () => {
    const engine = new MemoryEngine();
    const { wrapped, stats } = slowClaims(engine, 3);
    const p = producer(wrapped, () => assert.fail('nothing to claim'), { active: 0 });
    await p.start();
    await delay(300);
    await p.stop();
    assert.ok(stats.claims >= 5, `polled ${stats.claims} times`);
    assert.equal(stats.maxInFlight, 1);
    assert.equal(stats.overlapsAfterShort, 0);
  });
});
