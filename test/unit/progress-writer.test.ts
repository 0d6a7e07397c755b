// The ProgressWriter's bookkeeping that the conformance cases do not reach: a failed write is
// put back for the next turn unless a newer value or the job's outcome (forget) came meanwhile,
// and flushJob writes one job's value at once. On the memory engine with a ManualClock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { Job } from '../../src/core/types.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { ProgressWriter } from '../../src/queue/progress-writer.js';
import { faultyEngine } from '../support/faulty-engine.js';

async function setUp(): Promise<{
  clock: ManualClock;
  engine: MemoryEngine;
  probe: ReturnType<typeof faultyEngine>;
  writer: ProgressWriter;
  errors: unknown[];
  jobs: Job[];
}> {
  const clock = new ManualClock();
  const engine = new MemoryEngine({ clock });
  await engine.jobEnqueue({
    jobs: [1, 2].map(() => ({ queue: 'q', payload: {}, maxAttempts: 3 })),
  });
  const jobs = await engine.jobClaimBatch({
    queues: ['q'],
    workerId: 'w',
    limit: 2,
    leaseTtlMs: 60_000,
  });
  const probe = faultyEngine(engine);
  const errors: unknown[] = [];
  const writer = new ProgressWriter({
    engine: probe.engine,
    ownerId: 'w',
    clock,
    intervalMs: 250,
    onError: (error) => errors.push(error),
  });
  return { clock, engine, probe, writer, errors, jobs };
}

const stored = async (engine: MemoryEngine, job: Job): Promise<unknown> =>
  (await engine.jobGet({ id: job.id }))?.progress;

describe('ProgressWriter', () => {
  it('puts a failed write back for the next turn, except what was forgotten or replaced', async () => {
    const { clock, engine, probe, writer, errors, jobs } = await setUp();
    const [a, b] = jobs as [Job, Job];
    const refused: number[] = [];
    const report = (job: Job, progress: number): void =>
      writer.report({
        ref: { id: job.id, generation: job.generation },
        progress,
        onRefused: () => refused.push(job.id),
      });
    probe.set('jobProgress', 'fail');
    report(a, 10);
    report(b, 20);
    await clock.advance(0);
    assert.equal(errors.length, 1);
    writer.forget(b.id); // b's outcome went out: its value must not come back
    probe.set('jobProgress', 'pass');
    await clock.advance(249);
    assert.equal(probe.calls('jobProgress'), 1, 'not before the interval');
    await clock.advance(1);
    assert.equal(probe.calls('jobProgress'), 2);
    assert.equal(await stored(engine, a), 10, 'put back and written');
    assert.equal(await stored(engine, b), null, 'forgotten');

    // A job that is no longer the writer's: refused and reported, not retried.
    await engine.jobCancel({ id: a.id });
    report(a, 30);
    await clock.advance(250);
    assert.deepEqual(refused, [a.id]);
    await clock.advance(1_000);
    assert.equal(probe.calls('jobProgress'), 3);
    await writer.stop();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('flushJob writes one job at once, and waits for nothing when the job has nothing unwritten', async () => {
    const { clock, engine, probe, writer, jobs } = await setUp();
    const [a, b] = jobs as [Job, Job];
    await writer.flushJob(a.id);
    assert.equal(probe.calls('jobProgress'), 0);
    writer.report({
      ref: { id: a.id, generation: a.generation },
      progress: 5,
      onRefused: () => {},
    });
    await clock.advance(0); // the leading write
    writer.report({
      ref: { id: a.id, generation: a.generation },
      progress: 6,
      onRefused: () => {},
    });
    writer.report({
      ref: { id: b.id, generation: b.generation },
      progress: 7,
      onRefused: () => {},
    });
    await writer.flushJob(a.id); // before the interval is up
    assert.equal(await stored(engine, a), 6);
    assert.equal(await stored(engine, b), null, 'only the flushed job');
    await clock.advance(250);
    assert.equal(await stored(engine, b), 7);
    assert.equal(probe.calls('jobProgress'), 3);
  });
});
