/**
 * Failover-safe tokens across a real promotion that loses acknowledged commits (decision 0225).
 *
 * A primary and an asynchronous standby (test/support/promotable-standby.ts). The standby stops
 * receiving WAL; on the primary every token path then hands out one more token, which the
 * primary acknowledges (durably, on its own disk); the primary crashes and the standby is
 * promoted without those commits. On the new primary the next token of every path must be
 * strictly greater than the lost one, though the database no longer shows it, and no new term
 * may start before the lost holders' trust is over (the quarantine).
 *
 * Seen on the code before epoch tokens (with the assertions turned into reports): the lease token
 * 2, the lease-lock token 2 and the job generation 1 were each handed out a second time, and the
 * slot was claimed again at once, with no quarantine. The session-lock token did not repeat in
 * that run only because a sequence logs its values 32 ahead, and the standby had the record.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { startPromotableStandby, type PromotableStandby } from '../support/promotable-standby.js';
import { afterQuarantine } from '../support/quarantine.js';

const SCHEMA = 'epoch_failover';
const TTL_MS = 2_000;

let cluster: PromotableStandby;
before(async () => {
  cluster = await startPromotableStandby({ synchronous: false });
});
after(async () => {
  await cluster?.stop();
});

function openEngine(url: string): PostgresEngine {
  return new PostgresEngine({ connectionString: url, schema: SCHEMA, poolSize: 4 });
}

test('every token path: the next token after a lossy promotion is above the lost one', async () => {
  const old = openEngine(cluster.primaryUrl);
  await old.migrate();
  const slot = new Date(Date.now() - 1_000);

  // Terms the standby receives.
  const kept = await old.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL_MS });
  assert.ok(kept.acquired);
  await old.leaseRelease({ resource: 'r', holder: 'a', token: kept.lease.token });
  const keptLock = await old.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL_MS });
  assert.ok(keptLock.acquired);
  await old.leaseLockRelease({ name: 'l', holder: 'a', token: keptLock.lease.token });
  const [enqueued] = await old.jobEnqueue({ jobs: [{ queue: 'q', payload: {}, maxAttempts: 5 }] });
  const keptSession = await old.sessionLockTryAcquire({ name: 's' });
  assert.ok(keptSession);
  await keptSession.release();
  await cluster.waitForStandby();

  // Terms acknowledged by the primary alone: the promotion will lose them.
  await cluster.disconnectStandby();
  const lost = await old.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL_MS });
  assert.ok(lost.acquired);
  const lostLock = await old.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL_MS });
  assert.ok(lostLock.acquired);
  const [lostClaim] = await old.jobClaimBatch({
    queues: ['q'],
    workerId: 'w-old',
    limit: 1,
    leaseTtlMs: TTL_MS,
  });
  assert.equal(lostClaim?.id, enqueued!.job.id);
  const lostSession = await old.sessionLockTryAcquire({ name: 's' });
  assert.ok(lostSession);
  const lostSlot = await old.scheduleSlotClaim({ name: 'tick', slot, holder: 'old' });
  assert.ok(lostSlot);

  await cluster.crashPrimary();
  await old.close().catch(() => {});
  const { timeline } = await cluster.promote();
  assert.ok(timeline >= 2);

  const promoted = openEngine(cluster.standbyUrl);
  try {
    // The database has forgotten every lost term ...
    assert.equal((await promoted.leaseGet({ resource: 'r' }))?.token, kept.lease.token);
    // ... and yet no token repeats, and no new term starts before the quarantine ends.
    const [lease, leaseRefusals] = await afterQuarantine(() =>
      promoted.leaseAcquire({ resource: 'r', holder: 'c', ttlMs: TTL_MS }),
    );
    assert.ok(lease.acquired);
    assert.ok(
      lease.lease.token > lost.lease.token,
      `lease token ${lease.lease.token} must be above the lost ${lost.lease.token}`,
    );
    assert.ok(leaseRefusals > 0, 'the first acquire after the promotion waits out the quarantine');

    const [lock] = await afterQuarantine(() =>
      promoted.leaseLockAcquire({ name: 'l', holder: 'c', ttlMs: TTL_MS }),
    );
    assert.ok(lock.acquired);
    assert.ok(lock.lease.token > lostLock.lease.token, 'lease-lock token above the lost one');

    const [[claim]] = await afterQuarantine(() =>
      promoted.jobClaimBatch({ queues: ['q'], workerId: 'w-new', limit: 1, leaseTtlMs: TTL_MS }),
    );
    assert.equal(claim?.id, lostClaim.id);
    assert.ok(claim!.generation > lostClaim.generation, 'generation above the lost claim');
    // The lost claimer's completion cannot land on the new claim.
    assert.deepEqual(
      await promoted.jobComplete({
        workerId: 'w-old',
        jobs: [{ id: lostClaim.id, generation: lostClaim.generation }],
      }),
      [],
    );

    const [session] = await afterQuarantine(() => promoted.sessionLockTryAcquire({ name: 's' }));
    assert.ok(session);
    assert.ok(session.token > lostSession.token, 'session-lock token above the lost one');
    await session.release();

    const [again] = await afterQuarantine(() =>
      promoted.scheduleSlotClaim({ name: 'tick', slot, holder: 'new' }),
    );
    // The lost claim is gone, so the slot runs again, but only after the old claimer's trust.
    assert.equal(again?.holder, 'new');
  } finally {
    await promoted.close();
  }
});
