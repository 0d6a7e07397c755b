/**
 * Claiming ahead on PostgreSQL (decision 0277). A worker of concurrency 1 whose handlers are
 * short takes several jobs per claim yet never runs two handlers at once; with `claimAhead:
 * false` it takes one per claim. Jobs held ahead behind a handler that runs long go back to the
 * queue, their attempt given back, and another worker runs them; a drain gives them back at
 * once rather than after the running handler. A queue with flow-control settings is never
 * claimed ahead.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { systemClock, type Clock, type Timer } from '../../src/core/clock.js';
import { isLeaseholdError } from '../../src/core/errors.js';
import type { Engine } from '../../src/engine/engine.js';
import type { JobClaimParams, JobLeaseRef } from '../../src/engine/jobs.js';
import type { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { AHEAD_WAIT_MS } from '../../src/queue/claim-ahead.js';
import type { Worker } from '../../src/queue/worker.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { deferred, waitFor } from '../support/wait.js';

after(closeTestDatabase);

type Step = 'quick' | 'block' | 'after';

/** The engine with every claim's answer and every hand-back recorded. */
function recorded(engine: PostgresEngine) {
  const claims: { limit: number; steps: Step[] }[] = [];
  const handedBack: number[] = [];
  const wrapped = Object.create(engine) as Engine;
  wrapped.jobClaimBatch = async (p: JobClaimParams) => {
    const jobs = await engine.jobClaimBatch(p);
    claims.push({ limit: p.limit, steps: jobs.map((job) => (job.payload as { step: Step }).step) });
    return jobs;
  };
  wrapped.jobHandBack = async (p: { workerId: string; jobs: readonly JobLeaseRef[] }) => {
    const ids = await engine.jobHandBack(p);
    handedBack.push(...ids);
    return ids;
  };
  return { wrapped, claims, handedBack };
}

/**
 * 30 quick jobs (short handlers open the line ahead), one that blocks until released, and 10
 * after it, which a worker of concurrency 1 can only hold ahead while the block runs.
 */
async function enqueueSteps(lh: Leasehold): Promise<number[]> {
  const queue = lh.queue('q');
  await queue.enqueueMany(Array.from({ length: 30 }, () => ({ payload: { step: 'quick' } })));
  await queue.enqueue({ step: 'block' });
  const afterJobs = await queue.enqueueMany(
    Array.from({ length: 10 }, () => ({ payload: { step: 'after' } })),
  );
  return afterJobs.map((job) => job.id);
}

/** A worker of concurrency 1 that blocks on the `block` job until `release` and notes each step. */
function blockingWorker(lh: Leasehold, ran: { worker: string; step: Step }[], name: string) {
  const blocked = deferred();
  const release = deferred();
  const worker = lh.worker({
    queues: 'q',
    concurrency: 1,
    handler: async (job) => {
      const { step } = job.payload as { step: Step };
      ran.push({ worker: name, step });
      if (step === 'block') {
        blocked.resolve();
        await release.promise;
      }
    },
  });
  return { worker, blocked: blocked.promise, release: release.resolve };
}

/** Enqueues 60 quick jobs and drains them with a worker of concurrency 1 and `options`. */
async function drainOneAtATime(lh: Leasehold, options: { claimAhead?: boolean }): Promise<void> {
  await lh
    .queue('q')
    .enqueueMany(Array.from({ length: 60 }, () => ({ payload: { step: 'quick' } })));
  let done = 0;
  const worker = lh.worker({
    queues: 'q',
    concurrency: 1,
    ...options,
    handler: async () => {
      done++;
    },
  });
  await worker.start();
  try {
    await waitFor('every job ran', () => done === 60);
  } finally {
    await worker.stop();
  }
}

function assertOneJobPerClaim(claims: readonly { limit: number; steps: Step[] }[]): void {
  assert.ok(
    claims.every((c) => c.limit === 1 && c.steps.length <= 1),
    `claims asked ${[...new Set(claims.map((c) => c.limit))].join(',')}`,
  );
}

/**
 * The system clock, except that while `holding` the timers of exactly AHEAD_WAIT_MS never
 * fire: the wait of a job held ahead cannot end it, so only a drain can give it back.
 */
class HeldWaitClock implements Clock {
  holding = true;
  now(): Date {
    return systemClock.now();
  }
  monotonic(): number {
    return systemClock.monotonic();
  }
  setTimer(delayMs: number, callback: () => void): Timer {
    return systemClock.setTimer(delayMs, () => {
      if (!(this.holding && delayMs === AHEAD_WAIT_MS)) callback();
    });
  }
}

describe('claiming ahead on PostgreSQL', () => {
  it('takes several jobs per claim at concurrency 1, never running two handlers at once', () =>
    withSchema('claim ahead batches', async (schema) => {
      const { wrapped, claims } = recorded(await schema.engine());
      const lh = Leasehold.fromEngine(wrapped);
      const queue = lh.queue('q');
      const enqueued = await queue.enqueueMany(
        Array.from({ length: 400 }, () => ({ payload: { step: 'quick' } })),
      );
      let running = 0;
      let mostRunning = 0;
      const seen = new Map<number, number>();
      const worker = lh.worker({
        queues: 'q',
        concurrency: 1,
        handler: async (job) => {
          running++;
          mostRunning = Math.max(mostRunning, running);
          seen.set(job.id, (seen.get(job.id) ?? 0) + 1);
          await Promise.resolve();
          running--;
        },
      });
      await worker.start();
      try {
        await waitFor('every job completed', async () => {
          const counts = await lh.engine.jobCounts();
          return counts.find((c) => c.status === 'completed')?.count === enqueued.length;
        });
      } finally {
        await worker.stop();
      }
      assert.equal(mostRunning, 1, 'one handler at a time');
      assert.equal(seen.size, enqueued.length);
      assert.ok(
        [...seen.values()].every((n) => n === 1),
        'each job ran once',
      );
      const taken = claims.map((c) => c.steps.length);
      assert.ok(
        Math.max(...taken) > 1,
        `some claim took more than one job (claims took ${taken.slice(0, 20).join(',')}...)`,
      );
      assert.ok(
        claims.length < enqueued.length / 2,
        `${claims.length} claims for ${enqueued.length} jobs`,
      );
    }));

  it('with claimAhead false takes one job per claim at concurrency 1', () =>
    withSchema('claim ahead off', async (schema) => {
      const { wrapped, claims } = recorded(await schema.engine());
      await drainOneAtATime(Leasehold.fromEngine(wrapped), { claimAhead: false });
      assertOneJobPerClaim(claims);
    }));

  it('never claims ahead for a queue with flow-control settings', () =>
    withSchema('claim ahead limited', async (schema) => {
      const { wrapped, claims } = recorded(await schema.engine());
      const lh = Leasehold.fromEngine(wrapped);
      // A limit the worker cannot reach: only the settings' presence counts.
      await lh.queue('q').configure({ concurrency: 50 });
      await drainOneAtATime(lh, {});
      assertOneJobPerClaim(claims);
    }));

  it('gives jobs held behind a long handler back, their attempt given back, to another worker', () =>
    withSchema('claim ahead stall', async (schema) => {
      const { wrapped, claims, handedBack } = recorded(await schema.engine());
      const lh = Leasehold.fromEngine(wrapped);
      const afterIds = await enqueueSteps(lh);
      const ran: { worker: string; step: Step }[] = [];
      const a = blockingWorker(lh, ran, 'a');
      let b: Worker | undefined;
      await a.worker.start();
      try {
        await a.blocked;
        await waitFor('worker a to hold jobs after the block', () =>
          claims.some((c) => c.steps.includes('after')),
        );
        const heldByA = heldByAOf(claims);
        await waitFor('the held jobs handed back', () => handedBack.length >= heldByA);
        for (const id of handedBack) {
          const job = (await lh.engine.jobGet({ id }))!;
          assert.ok(afterIds.includes(id), `job ${id} is one of those after the block`);
          assert.equal(job.status, 'pending', `job ${id} is back in the queue`);
          assert.equal(job.attempts, 0, `job ${id} has its attempt back`);
        }
        b = blockingWorker(lh, ran, 'b').worker;
        await b.start();
        await waitFor(
          'worker b to run every job after the block',
          () =>
            ran.filter((r) => r.worker === 'b' && r.step === 'after').length === afterIds.length,
        );
        assert.ok(
          !ran.some((r) => r.worker === 'a' && r.step === 'after'),
          'worker a, still blocked, never started one',
        );
        for (const id of afterIds) assert.equal((await lh.engine.jobGet({ id }))!.attempts, 1);
      } finally {
        a.release();
        await Promise.all([a.worker.stop(), b?.stop()]);
      }
    }));

  it('a drain gives the jobs held ahead back at once, before the running handler ends', () =>
    withSchema('claim ahead drain', async (schema) => {
      const clock = new HeldWaitClock();
      const { wrapped, claims, handedBack } = recorded(await schema.engine({ clock }));
      const lh = Leasehold.fromEngine(wrapped);
      const afterIds = await enqueueSteps(lh);
      const ran: { worker: string; step: Step }[] = [];
      const a = blockingWorker(lh, ran, 'a');
      await a.worker.start();
      let drained: ReturnType<Worker['drain']> | undefined;
      try {
        await a.blocked;
        await waitFor('worker a to hold jobs after the block', () =>
          claims.some((c) => c.steps.includes('after')),
        );
        const heldByA = heldByAOf(claims);
        drained = a.worker.drain({ timeout: '60s' });
        await waitFor('the held jobs handed back', () => handedBack.length >= heldByA);
        assert.equal(a.worker.state, 'draining', 'the block still runs');
        for (const id of handedBack) {
          assert.ok(afterIds.includes(id));
          const job = (await lh.engine.jobGet({ id }))!;
          assert.deepEqual([job.status, job.attempts], ['pending', 0], `job ${id}`);
        }
      } finally {
        a.release();
        clock.holding = false;
      }
      const result = await drained!;
      assert.equal(result.handedBack, heldByAOf(claims), 'the drain counts what it gave back');
      assert.ok(!ran.some((r) => r.step === 'after'), 'no job after the block started');
    }));

  it('refuses a claimAhead that is not a boolean', () => {
    const lh = Leasehold.memory();
    assert.throws(
      () => lh.worker({ queues: 'q', claimAhead: 'yes' as never, handler: async () => {} }),
      (e: unknown) =>
        isLeaseholdError(e, 'invalid_argument') && e.details['field'] === 'claimAhead',
    );
  });
});

function heldByAOf(claims: { steps: Step[] }[]): number {
  return claims.flatMap((c) => c.steps).filter((s) => s === 'after').length;
}
