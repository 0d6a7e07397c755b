// The managers added to the facade for the service, the CLI and the processes (decision 0231):
// lh.jobs (reads, administration, the claim protocol), lh.controls, lh.locks.listLeaseLocks,
// lh.listSchedules. They do what the engine calls they wrap do, and refuse bad input with a
// typed error before anything reaches the engine.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { Leasehold } from '../../src/leasehold.js';

const invalid = { code: 'invalid_argument' };

describe('facade managers', () => {
  it('lh.jobs runs the claim protocol with the generation guard', async () => {
    const lh = Leasehold.memory({ clock: new ManualClock() });
    try {
      const a = await lh.queue('q').enqueue({ n: 1 });
      const b = await lh.queue('q').enqueue({ n: 2 });
      const [claimed] = await lh.jobs.claim('q', { workerId: 'w1', leaseTtl: '30s' });
      assert.equal(claimed?.id, a.id);
      assert.equal(claimed?.claimedBy, 'w1');
      const ref = { id: claimed!.id, generation: claimed!.generation };
      assert.equal((await lh.jobs.renewClaims('w1', [ref], { leaseTtl: '1m' })).length, 1);
      assert.deepEqual(await lh.jobs.renewClaims('w2', [ref], { leaseTtl: '1m' }), []);
      assert.deepEqual(await lh.jobs.complete('w1', [{ ...ref, generation: 99 }]), []);
      assert.deepEqual(await lh.jobs.complete('w1', [{ ...ref, result: { ok: true } }]), [a.id]);
      assert.equal((await lh.jobs.get(a.id))?.status, 'completed');

      const [second] = await lh.jobs.claim(['q'], { workerId: 'w1', leaseTtl: 1_000, limit: 5 });
      assert.equal(second?.id, b.id);
      const ref2 = { id: second!.id, generation: second!.generation };
      assert.deepEqual(await lh.jobs.handBack('w1', [ref2]), [b.id]);
      assert.equal((await lh.jobs.get(b.id))?.attempts, 0, 'a hand-back gives the attempt back');
      const [third] = await lh.jobs.claim('q', { workerId: 'w2', leaseTtl: '30s' });
      const [failed] = await lh.jobs.fail('w2', [
        { id: third!.id, generation: third!.generation, error: 'boom', retryDelay: '1s' },
      ]);
      assert.deepEqual(failed, { id: b.id, outcome: 'retried' });

      assert.deepEqual(
        (await lh.jobs.list({ queue: 'q', status: 'completed' })).map((j) => j.id),
        [a.id],
      );
      const counts = await lh.jobs.counts();
      assert.ok(counts.some((c) => c.queue === 'q' && c.status === 'completed' && c.count === 1));
      assert.equal((await lh.jobs.cancel(b.id))?.status, 'cancelled');
      assert.equal((await lh.jobs.retry(b.id))?.status, 'pending');
      assert.equal(await lh.jobs.delete(a.id), true);
      assert.equal(await lh.jobs.get(a.id), null);
    } finally {
      await lh.close();
    }
  });

  it('refuses bad input with invalid_argument and changes nothing', async () => {
    const lh = Leasehold.memory({ clock: new ManualClock() });
    try {
      const job = await lh.queue('q').enqueue({});
      const bad: [string, () => Promise<unknown>][] = [
        ['get id 0', () => lh.jobs.get(0)],
        ['get id 1.5', () => lh.jobs.get(1.5)],
        ['list limit over the maximum', () => lh.jobs.list({ limit: 1001 })],
        ['list unknown status', () => lh.jobs.list({ status: 'finished' as never })],
        ['list empty queue', () => lh.jobs.list({ queue: '' })],
        ['workers unknown status', () => lh.jobs.workers({ status: 'asleep' as never })],
        ['claim no queue', () => lh.jobs.claim([], { workerId: 'w', leaseTtl: '1s' })],
        ['claim ttl too short', () => lh.jobs.claim('q', { workerId: 'w', leaseTtl: 5 })],
        ['claim no worker', () => lh.jobs.claim('q', { workerId: '', leaseTtl: '1s' })],
        ['complete generation 0', () => lh.jobs.complete('w', [{ id: job.id, generation: 0 }])],
        ['handBack not a list', () => lh.jobs.handBack('w', 'x' as never)],
        [
          'fail negative delay',
          () => lh.jobs.fail('w', [{ id: job.id, generation: 1, error: 'e', retryDelay: -1 }]),
        ],
        ['cancel id -1', () => lh.jobs.cancel(-1)],
        ['delete id NaN', () => lh.jobs.delete(Number.NaN)],
        ['controls get empty name', () => lh.controls.get('')],
        ['controls set array value', () => lh.controls.set('c', [] as never, { updatedBy: 'me' })],
        ['controls set no updatedBy', () => lh.controls.set('c', {}, { updatedBy: '' })],
        ['lease locks limit 0', () => lh.locks.listLeaseLocks({ limit: 0 })],
        ['schedules limit over the maximum', () => lh.listSchedules({ limit: 5000 })],
      ];
      for (const [what, call] of bad) await assert.rejects(call(), invalid, what);
      const after = await lh.jobs.get(job.id);
      assert.equal(after?.status, 'pending');
      assert.equal(after?.attempts, 0);
      assert.equal(await lh.controls.get('c'), null);
    } finally {
      await lh.close();
    }
  });

  it('lh.controls, lh.locks.listLeaseLocks, lh.listSchedules and lh.now read what was written', async () => {
    const clock = new ManualClock();
    const lh = Leasehold.memory({ clock });
    try {
      const set = await lh.controls.set('generator', { running: true }, { updatedBy: 'ops' });
      assert.deepEqual(set.value, { running: true });
      const got = await lh.controls.get('generator');
      assert.equal(got?.updatedBy, 'ops');
      assert.deepEqual(got?.value, { running: true });

      const lock = lh.locks.lease('leasehold:election:alpha', { ttl: '30s' });
      assert.ok(await lock.tryLock());
      const terms = await lh.locks.listLeaseLocks({ prefix: 'leasehold:election:' });
      assert.deepEqual(
        terms.map((t) => t.resource),
        ['leasehold:election:alpha'],
      );
      assert.deepEqual(await lh.locks.listLeaseLocks({ prefix: 'other:' }), []);
      await lock.unlock();

      assert.deepEqual(await lh.listSchedules(), []);
      assert.equal((await lh.now()).getTime(), clock.now().getTime());
      assert.equal(lh.clock, lh.engine.clock);
    } finally {
      await lh.close();
    }
  });
});
