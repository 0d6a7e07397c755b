/**
 * Failover-safe tokens (decision 0225), path by path, on the shared test server. A failover is
 * stood in for by rewriting the newest epoch's recorded timeline, which is exactly what the
 * token statements compare the server against, and a write lost in the failover by putting the
 * row back as it was before that write. (test/crash/epoch-failover.test.ts promotes a real
 * standby.) The engine's clock is pinned, starting now, so a test can step past the quarantine
 * without waiting for it.
 *
 * For each path: the first token statement after the change enters epoch 1; a new term is
 * refused with `unavailable` (reason `failover_quarantine`, a retry-after) until the quarantine
 * ends; afterwards the token is above 2^32, and so above the lost one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { ManualClock } from '../../src/core/clock.js';
import { isLeaseholdError, type LeaseholdError } from '../../src/core/errors.js';
import type { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { withSchema, type SchemaContext } from '../support/database.js';
import { afterQuarantine } from '../support/quarantine.js';

const EPOCH_1_FLOOR = 2 ** 32;

async function sql<R extends pg.QueryResultRow = pg.QueryResultRow>(
  ctx: SchemaContext,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client(ctx.url);
  await client.connect();
  try {
    return (await client.query<R>(text.replaceAll('$s', `"${ctx.schema}"`), values)).rows;
  } finally {
    await client.end();
  }
}

/** What the token statements will take for a promoted server: a history they have not seen. */
async function failOver(ctx: SchemaContext): Promise<void> {
  await sql(ctx, 'UPDATE $s.epochs SET timeline = timeline + 1000');
}

async function epochs(ctx: SchemaContext): Promise<{ epoch: number; quarantineMs: number }[]> {
  const rows = await sql<{ epoch: number; quarantine_ms: number }>(
    ctx,
    `SELECT epoch, extract(epoch FROM quarantine_until - began_at) * 1000 AS quarantine_ms
     FROM $s.epochs WHERE quarantine_until > '-infinity' ORDER BY epoch`,
  );
  return rows.map((r) => ({ epoch: r.epoch, quarantineMs: Number(r.quarantine_ms) }));
}

/**
 * Moves the pinned clock just past the newest epoch's quarantine. The quarantine started on the
 * database's own clock, which ran on while the test did, so the step is measured from it.
 */
async function passQuarantine(ctx: SchemaContext, clock: ManualClock): Promise<void> {
  const [row] = await sql<{ until: Date }>(
    ctx,
    'SELECT quarantine_until AS until FROM $s.epochs ORDER BY epoch DESC LIMIT 1',
  );
  await clock.advance(Math.max(0, row!.until.getTime() - clock.now().getTime()) + 1);
}

async function quarantined(what: Promise<unknown>): Promise<LeaseholdError> {
  const error = await what.then(
    () => assert.fail('expected the failover quarantine to refuse a new term'),
    (e: unknown) => e,
  );
  assert.ok(isLeaseholdError(error, 'unavailable'), `unavailable expected, got ${String(error)}`);
  assert.equal(error.details['reason'], 'failover_quarantine');
  const retryAfterMs = error.details['retryAfterMs'];
  assert.ok(typeof retryAfterMs === 'number' && retryAfterMs > 0, 'a retry-after is given');
  return error;
}

async function pinnedEngine(ctx: SchemaContext): Promise<[PostgresEngine, ManualClock]> {
  const clock = new ManualClock(new Date());
  return [await ctx.engine({ clock }), clock];
}

describe('epoch tokens after a failover', () => {
  it('leases: a lost term is not handed out again, nor any term during the quarantine', () =>
    withSchema('epoch leases', async (ctx) => {
      const [engine, clock] = await pinnedEngine(ctx);
      const first = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: 8_000 });
      assert.ok(first.acquired);
      assert.equal(first.lease.token, 1, 'epoch 0 goes on from the tokens already handed out');
      await engine.leaseRelease({ resource: 'r', holder: 'a', token: 1 });
      const lost = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: 8_000 });
      assert.ok(lost.acquired);
      assert.equal(lost.lease.token, 2);
      const kept = await engine.leaseAcquire({ resource: 'kept', holder: 'k', ttlMs: 8_000 });
      assert.ok(kept.acquired);
      // The promotion loses b's term: the row is back at a's released term 1.
      await sql(ctx, `UPDATE $s.leases SET token = 1, holder = 'a' WHERE resource = 'r'`);
      await failOver(ctx);

      await quarantined(engine.leaseAcquire({ resource: 'r', holder: 'c', ttlMs: 8_000 }));
      const [epoch1] = await epochs(ctx);
      assert.equal(epoch1?.epoch, 1);
      assert.equal(epoch1?.quarantineMs, 8_000, 'the longest ttl the surviving rows show');
      await quarantined(engine.leaseAcquire({ resource: 'new', holder: 'c', ttlMs: 1_000 }));
      await quarantined(
        engine.leaseAcquireMany([
          { resource: 'kept', holder: 'k', ttlMs: 8_000 },
          { resource: 'other', holder: 'c', ttlMs: 8_000 },
        ]),
      );
      // The live holder carries on: renewals and its own re-acquire grant no new term.
      const renewed = await engine.leaseRenew({
        resource: 'kept',
        holder: 'k',
        token: kept.lease.token,
        ttlMs: 8_000,
      });
      assert.equal(renewed?.token, kept.lease.token);
      const again = await engine.leaseAcquire({ resource: 'kept', holder: 'k', ttlMs: 8_000 });
      assert.ok(again.acquired);
      assert.equal(again.lease.token, kept.lease.token);

      await passQuarantine(ctx, clock);
      const next = await engine.leaseAcquire({ resource: 'r', holder: 'c', ttlMs: 8_000 });
      assert.ok(next.acquired);
      assert.equal(next.lease.token, EPOCH_1_FLOOR + 1);
      assert.ok(next.lease.token > lost.lease.token, 'above the token the failover lost');
      const fresh = await engine.leaseAcquire({ resource: 'new', holder: 'c', ttlMs: 1_000 });
      assert.ok(fresh.acquired);
      assert.equal(fresh.lease.token, EPOCH_1_FLOOR + 1);
      assert.ok(Number.isSafeInteger(next.lease.token));
    }));

  it('lease locks and elections: the next term is above the lost one', () =>
    withSchema('epoch lease locks', async (ctx) => {
      const [engine, clock] = await pinnedEngine(ctx);
      const first = await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: 2_000 });
      assert.ok(first.acquired);
      await engine.leaseLockRelease({ name: 'l', holder: 'a', token: first.lease.token });
      const lost = await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: 2_000 });
      assert.ok(lost.acquired);
      await sql(ctx, `UPDATE $s.lease_locks SET token = $1, holder = 'a' WHERE name = 'l'`, [
        first.lease.token,
      ]);
      await failOver(ctx);
      await quarantined(engine.leaseLockAcquire({ name: 'l', holder: 'c', ttlMs: 2_000 }));
      assert.equal((await epochs(ctx))[0]?.quarantineMs, 5_000, 'at least 5 s');
      await passQuarantine(ctx, clock);
      const next = await engine.leaseLockAcquire({ name: 'l', holder: 'c', ttlMs: 2_000 });
      assert.ok(next.acquired);
      assert.equal(next.lease.token, EPOCH_1_FLOOR + 1);
      assert.ok(next.lease.token > lost.lease.token);
    }));

  it('semaphores: a lost permit is not handed out again; the quarantine outlasts the longest permit', () =>
    withSchema('epoch semaphores', async (ctx) => {
      const [engine, clock] = await pinnedEngine(ctx);
      const acquire = (holder: string) =>
        engine.semaphoreAcquire({ name: 's', holder, permits: 1, ttlMs: 20_000 });
      const first = await acquire('a');
      assert.ok(first.acquired);
      assert.equal(first.permit.token, 1);
      await engine.semaphoreRelease({ ...first.permit });
      const lost = await acquire('b');
      assert.ok(lost.acquired);
      // The promotion loses b's permit: the slot and the counter are back at a's released one.
      await sql(
        ctx,
        `UPDATE $s.semaphore_slots SET token = 1, holder = 'a', expires_at = $1 WHERE name = 's'`,
        [first.permit.acquiredAt],
      );
      await sql(ctx, `UPDATE $s.semaphores SET token = 1 WHERE name = 's'`);
      await failOver(ctx);
      await quarantined(acquire('c'));
      assert.equal((await epochs(ctx))[0]?.quarantineMs, 20_000, 'the longest permit ttl');
      await passQuarantine(ctx, clock);
      const next = await acquire('c');
      assert.ok(next.acquired);
      assert.equal(next.permit.token, EPOCH_1_FLOOR + 1);
      assert.ok(next.permit.token > lost.permit.token, 'above the token the failover lost');
    }));

  it('job claims: a claim the failover lost is not repeated with the same generation', () =>
    withSchema('epoch job claims', async (ctx) => {
      const [engine, clock] = await pinnedEngine(ctx);
      const [enqueued] = await engine.jobEnqueue({
        jobs: [{ queue: 'q', payload: {}, maxAttempts: 10 }],
      });
      const id = enqueued!.job.id;
      const [claimed] = await engine.jobClaimBatch({
        queues: ['q'],
        workerId: 'w1',
        limit: 1,
        leaseTtlMs: 3_000,
      });
      assert.equal(claimed?.generation, 1);
      // The claim is lost: the job is pending again at generation 0.
      await sql(
        ctx,
        `UPDATE $s.jobs SET status = 'pending', generation = 0, attempts = 0,
           lease_expires_at = NULL WHERE id = $1`,
        [id],
      );
      await failOver(ctx);
      await quarantined(
        engine.jobClaimBatch({ queues: ['q'], workerId: 'w2', limit: 1, leaseTtlMs: 3_000 }),
      );
      await passQuarantine(ctx, clock);
      const [again] = await engine.jobClaimBatch({
        queues: ['q'],
        workerId: 'w2',
        limit: 1,
        leaseTtlMs: 3_000,
      });
      assert.equal(again?.id, id);
      assert.equal(again?.generation, EPOCH_1_FLOOR + 1);
      // The first claimer's generation no longer matches: its completion is refused.
      const done = await engine.jobComplete({
        workerId: 'w1',
        jobs: [{ id, generation: 1 }],
      });
      assert.deepEqual(done, []);
    }));

  it('session locks: the token is above the epoch floor, and refused during the quarantine', () =>
    withSchema('epoch session locks', async (ctx) => {
      const [engine] = await pinnedEngine(ctx);
      const first = await engine.sessionLockTryAcquire({ name: 's' });
      assert.ok(first);
      const before = first.token;
      await first.release();
      await failOver(ctx);
      await quarantined(engine.sessionLockTryAcquire({ name: 's' }));
      // The session-lock draw reads the database's own clock (it has no pinned `now`), so the
      // quarantine is waited out in real time, as each refusal's retry-after says.
      const [next] = await afterQuarantine(() => engine.sessionLockTryAcquire({ name: 's' }));
      assert.ok(next, 'the row lock was freed when the refused attempt gave up');
      assert.ok(next.token > EPOCH_1_FLOOR && next.token > before);
      await next.release();
    }));

  it('advisory locks: no new holder during the quarantine (they carry no token)', () =>
    withSchema('epoch advisory locks', async (ctx) => {
      const [engine] = await pinnedEngine(ctx);
      const first = await engine.advisoryTryLock({ name: 'a' });
      assert.ok(first);
      await first.release();
      await failOver(ctx);
      await quarantined(engine.advisoryTryLock({ name: 'a' }));
      const waited = new AbortController();
      await quarantined(engine.advisoryLock({ name: 'a', signal: waited.signal }));
      const [next] = await afterQuarantine(() => engine.advisoryTryLock({ name: 'a' }));
      assert.ok(next, 'granted once the quarantine is over');
      await next.release();
    }));

  it('schedule slots: a slot whose claim was lost waits out the quarantine', () =>
    withSchema('epoch schedule slots', async (ctx) => {
      const [engine, clock] = await pinnedEngine(ctx);
      const slot = new Date(clock.now().getTime() - 1_000);
      const claimed = await engine.scheduleSlotClaim({ name: 'tick', slot, holder: 'a' });
      assert.ok(claimed);
      await sql(ctx, `DELETE FROM $s.schedule_slots WHERE name = 'tick'`);
      await failOver(ctx);
      await quarantined(engine.scheduleSlotClaim({ name: 'tick', slot, holder: 'b' }));
      await passQuarantine(ctx, clock);
      const again = await engine.scheduleSlotClaim({ name: 'tick', slot, holder: 'b' });
      assert.equal(again?.holder, 'b');
    }));

  it('a second engine meeting the same new history joins the epoch, it does not start another', () =>
    withSchema('epoch shared', async (ctx) => {
      const [one] = await pinnedEngine(ctx);
      const [two] = await pinnedEngine(ctx);
      await failOver(ctx);
      await Promise.all([
        quarantined(one.leaseAcquire({ resource: 'x', holder: 'a', ttlMs: 1_000 })),
        quarantined(two.leaseAcquire({ resource: 'x', holder: 'b', ttlMs: 1_000 })),
      ]);
      assert.deepEqual(
        (await epochs(ctx)).map((e) => e.epoch),
        [1],
      );
    }));
});
