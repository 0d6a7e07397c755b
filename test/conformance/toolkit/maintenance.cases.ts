import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { MAINTENANCE_LOCK, Maintainer } from '../../../src/queue/maintenance/maintainer.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/** Queue housekeeping on every engine: rescue, dead workers, pruning, one runner per cycle. */
export function maintenanceCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: maintenance`, () => {
    conformanceCase(
      h,
      'rescues a job whose worker vanished, and dead-letters one out of attempts',
      async ({ lh, engine, clock }) => {
        const retryable = await lh.queue('q').enqueue('retryable', { maxAttempts: 3 });
        const exhausted = await lh.queue('q').enqueue('exhausted', { maxAttempts: 1 });
        const claimed = await engine.jobClaimBatch({
          queues: ['q'],
          workerId: 'vanished',
          limit: 10,
          leaseTtlMs: 1_000,
        });
        assert.equal(claimed.length, 2);
        const maintainer = new Maintainer(engine, {
          clock,
          rescueBackoff: { baseMs: 0, capMs: 0 },
        });
        assert.equal((await maintainer.runOnce()).rescue, 0, 'live leases are left alone');
        await clock.advance(1_000);
        const cycle = await maintainer.runOnce();
        assert.equal(cycle.ran, true);
        assert.equal(cycle.rescue, 2);
        const back = (await engine.jobGet({ id: retryable.id }))!;
        assert.equal(back.status, 'pending');
        assert.equal(back.attempts, 1, 'the attempt the vanished worker used is counted');
        assert.equal((await engine.jobGet({ id: exhausted.id }))!.status, 'dead');
        // The vanished worker's completion, should it come back, is refused.
        const accepted = await engine.jobComplete({
          workerId: 'vanished',
          jobs: claimed.map((j) => ({ id: j.id, generation: j.generation })),
        });
        assert.deepEqual(accepted, []);
      },
    );

    conformanceCase(
      h,
      'runs a cycle on only one instance: the holder of the maintenance lock',
      async ({ engine, clock, peer }) => {
        const other = await peer();
        // Held the way another instance's maintainer holds it: an advisory lock, or a lease
        // lock where the engine has no advisory locks (pgbouncer transaction pooling).
        let release: () => Promise<unknown>;
        if (engine.capabilities.advisoryLocks) {
          const held = await other.advisoryTryLock({ name: MAINTENANCE_LOCK });
          assert.ok(held);
          release = () => held.release();
        } else {
          const held = await other.leaseLockAcquire({
            name: MAINTENANCE_LOCK,
            holder: 'another instance',
            ttlMs: 60_000,
          });
          assert.ok(held.acquired);
          const { token } = held.lease;
          release = () =>
            other.leaseLockRelease({ name: MAINTENANCE_LOCK, holder: 'another instance', token });
        }
        const maintainer = new Maintainer(engine, { clock });
        assert.equal((await maintainer.runOnce()).ran, false);
        await release();
        assert.equal((await maintainer.runOnce()).ran, true);
      },
    );

    conformanceCase(
      h,
      'marks silent workers dead and prunes finished jobs past retention, in bounded batches',
      async ({ lh, engine, clock }) => {
        await engine.workerRegister({
          id: 'w-silent',
          name: 'silent',
          host: 'h',
          pid: 1,
          queues: ['q'],
          concurrency: 1,
        });
        const jobs = await lh
          .queue('q')
          .enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: i })));
        for (const j of jobs) await engine.jobCancel({ id: j.id });
        const maintainer = new Maintainer(engine, {
          clock,
          workerSilence: 10_000,
          retention: 60_000,
          batchSize: 2,
        });
        await clock.advance(10_001);
        const first = await maintainer.runOnce();
        assert.equal(first['sweep-workers'], 1);
        assert.equal(first.prune, 0, 'not yet past retention');
        assert.equal((await engine.workerList({ limit: 10 }))[0]?.status, 'dead');
        await clock.advance(60_000);
        const second = await maintainer.runOnce();
        assert.equal(second.prune, 5, 'batches of two, repeated while full');
        assert.equal(await engine.jobGet({ id: jobs[0]!.id }), null);
      },
    );
  });
}
