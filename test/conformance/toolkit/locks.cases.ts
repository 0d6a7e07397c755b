/**
 * Toolkit-level cases for `lh.locks`: the three flavours behind one interface. The cases every
 * flavour must pass are written once and run for each; the lease flavour's timing rules
 * (auto-renew, trust deadline, quiet period, lockAtLeast, lock delay) follow, on the ManualClock.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { systemClock } from '../../../src/core/clock.js';
import { isLeaseholdError, type LeaseLostError } from '../../../src/core/errors.js';
import type { FencingToken, Lease } from '../../../src/core/types.js';
import type { Engine, EngineCapabilities } from '../../../src/engine/engine.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import type { Lock, LockKind, LockToken } from '../../../src/locks/lock.js';
import { LockManager } from '../../../src/locks/lock-manager.js';
import { EventQueue } from '../../support/events.js';
import { faultyEngine } from '../../support/faulty-engine.js';
import { LIVENESS_MS, waitFor, within } from '../../support/wait.js';
import { conformanceCase, type CaseContext, type EngineHarness } from '../harness.js';

/** Any flavour, seen through the shared interface (tryLock answers are normalised by `took`). */
type AnyLock = Lock<LockToken>;

interface Flavour {
  readonly kind: LockKind;
  readonly fenced: boolean;
  readonly requires: (keyof EngineCapabilities)[];
  make(locks: LockManager, name: string): AnyLock;
}

const TTL = 10_000;

const FLAVOURS: Flavour[] = [
  {
    kind: 'advisory',
    fenced: false,
    requires: ['advisoryLocks'],
    make: (locks, name) => locks.advisory(name) as unknown as AnyLock,
  },
  {
    kind: 'session',
    fenced: true,
    requires: ['sessionLocks'],
    make: (locks, name) => locks.session(name),
  },
  {
    kind: 'lease',
    fenced: true,
    requires: [],
    make: (locks, name) => locks.lease(name, { ttl: TTL }),
  },
];

/** tryLock's answer as "acquired?": a token, or `true` for advisory locks. */
function took(answer: FencingToken | boolean | null): boolean {
  return answer !== null && answer !== false;
}

function settledFlag(promise: Promise<unknown>): { settled: boolean } {
  const flag = { settled: false };
  promise.then(
    () => (flag.settled = true),
    () => (flag.settled = true),
  );
  return flag;
}

/**
 * Resolves once a `lock()` just called is really waiting: asleep between tries (lease: one more
 * timer on the ManualClock than `timersBefore`) or queued in the server (advisory, session on
 * PostgreSQL). The memory engine queues a connection-lock waiter synchronously.
 */
async function untilWaiting(
  ctx: CaseContext,
  kind: LockKind,
  name: string,
  timersBefore: number,
): Promise<void> {
  if (kind === 'lease') {
    await waitFor('the waiter to sleep', () => ctx.clock.pendingTimers() > timersBefore);
    return;
  }
  if (!(ctx.engine instanceof PostgresEngine)) return;
  const engine = ctx.engine;
  // A row-lock waiter holds the tuple lock of the row and waits for the holder's transaction.
  const sql =
    kind === 'advisory'
      ? `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
           AND classid::bigint = (hashtextextended($1, 0) >> 32) & 4294967295
           AND objid::bigint = hashtextextended($1, 0) & 4294967295`
      : `SELECT count(*)::int AS n FROM pg_locks w JOIN pg_locks t ON t.pid = w.pid
           WHERE w.locktype = 'transactionid' AND NOT w.granted
             AND t.locktype = 'tuple' AND t.relation = $1::regclass`;
  const param = kind === 'advisory' ? `${engine.schema}:${name}` : `${engine.schema}.session_locks`;
  await waitFor(`the ${kind} waiter to queue`, async () => {
    const { rows } = await engine.pool.query<{ n: number }>(sql, [param]);
    return (rows[0]?.n ?? 0) > 0;
  });
}

export function lockCases(h: EngineHarness): void {
  for (const flavour of FLAVOURS) flavourCases(h, flavour);
  leaseFlavourCases(h);
  validationCases(h);
}

function flavourCases(h: EngineHarness, f: Flavour): void {
  const requires = { requires: f.requires };
  describe(`[${h.name}] toolkit: ${f.kind} locks`, () => {
    conformanceCase(
      h,
      `${f.kind}: grants the lock to one handle at a time and tryLock answers no while it is held`,
      async ({ lh }) => {
        const a = f.make(lh.locks, 'job');
        const b = f.make(lh.locks, 'job');
        assert.equal(a.signal.aborted, true, 'no term yet: the signal starts aborted');
        assert.equal(a.isHeld(), false);
        const token = await a.lock();
        assert.equal(a.isHeld(), true);
        assert.equal(a.signal.aborted, false);
        if (f.fenced) assert.ok(typeof token === 'number' && token >= 1);
        else assert.equal(token, null, 'advisory locks have no token');
        assert.equal(took(await b.tryLock()), false);
        assert.equal(b.isHeld(), false);
        assert.ok(took(await f.make(lh.locks, 'other').tryLock()), 'names are independent');
        const signal = a.signal;
        assert.equal(await a.unlock(), true);
        assert.equal(signal.aborted, true, 'unlock ends the term');
        assert.ok(isLeaseholdError(signal.reason, 'aborted'));
        assert.equal(await a.unlock(), false, 'a second unlock is a no-op');
        const next = await b.tryLock();
        assert.ok(took(next));
        if (f.fenced)
          assert.ok((next as number) > (token as number), 'the next term has a higher token');
        await b.unlock();
      },
      requires,
    );

    conformanceCase(
      h,
      `${f.kind}: lock() waits while the lock is held and gets it when the holder unlocks`,
      async (ctx) => {
        const { lh, clock } = ctx;
        const holder = f.make(lh.locks, 'job');
        const first = await holder.lock();
        const waiter = f.make(lh.locks, 'job');
        const before = clock.pendingTimers();
        const waiting = waiter.lock();
        const flag = settledFlag(waiting);
        await untilWaiting(ctx, f.kind, 'job', before);
        assert.equal(flag.settled, false, 'still waiting while held');
        await holder.unlock();
        const second = await within(waiting, LIVENESS_MS, 'the waiting lock()');
        assert.equal(waiter.isHeld(), true);
        if (f.fenced) assert.ok((second as number) > (first as number));
        assert.equal(took(await holder.tryLock()), false);
        await waiter.unlock();
      },
      // A lease-lock waiter is woken by the release's notification; without them it polls,
      // which 'a waiting lock() sleeps until the quiet period ends' covers.
      { requires: f.kind === 'lease' ? [...f.requires, 'notifications'] : f.requires },
    );

    conformanceCase(
      h,
      `${f.kind}: lock() rejects with code timeout after its timeout and leaves the lock to its holder`,
      async ({ engine, lh }) => {
        const holder = f.make(lh.locks, 'job');
        await holder.lock();
        // A manager on the system clock: the timeout really elapses while the waiter waits.
        const waiter = f.make(new LockManager(engine, systemClock), 'job');
        const started = Date.now();
        await assert.rejects(waiter.lock({ timeout: 300 }), (e: unknown) =>
          isLeaseholdError(e, 'timeout'),
        );
        assert.ok(Date.now() - started >= 290, `waited ${Date.now() - started} ms`);
        assert.equal(waiter.isHeld(), false);
        assert.equal(holder.isHeld(), true);
        await holder.unlock();
        // The waiter that gave up must not have taken the lock on its way out.
        const next = f.make(lh.locks, 'job');
        await waitFor('the lock to be free', async () => took(await next.tryLock()));
        await next.unlock();
      },
      requires,
    );

    conformanceCase(
      h,
      `${f.kind}: lock() rejects with the signal's own reason when aborted`,
      async (ctx) => {
        const { lh, clock } = ctx;
        const holder = f.make(lh.locks, 'job');
        await holder.lock();
        const waiter = f.make(lh.locks, 'job');
        const before = clock.pendingTimers();
        const controller = new AbortController();
        const reason = new Error('shutting down');
        const waiting = waiter.lock({ signal: controller.signal });
        await untilWaiting(ctx, f.kind, 'job', before);
        controller.abort(reason);
        await assert.rejects(waiting, (e: unknown) => e === reason);
        const early = new Error('already cancelled');
        await assert.rejects(waiter.lock({ signal: AbortSignal.abort(early) }), (e) => e === early);
        assert.equal(waiter.isHeld(), false);
        await holder.unlock();
        await waitFor('the lock to be free', async () => took(await waiter.tryLock()));
        assert.equal(waiter.isHeld(), true, 'the handle is usable after an aborted wait');
        await waiter.unlock();
      },
      requires,
    );

    conformanceCase(
      h,
      `${f.kind}: runLocked passes the token and a live signal, and unlocks when fn throws`,
      async ({ lh }) => {
        const lock = f.make(lh.locks, 'job');
        const other = f.make(lh.locks, 'job');
        let seen: { token: LockToken; signal: AbortSignal } | undefined;
        await assert.rejects(
          lock.runLocked(async (token, signal) => {
            seen = { token, signal };
            assert.equal(signal.aborted, false);
            assert.equal(took(await other.tryLock()), false, 'exclusive while fn runs');
            throw new Error('boom');
          }),
          /boom/,
        );
        assert.ok(seen);
        if (f.fenced) assert.ok(typeof seen.token === 'number');
        else assert.equal(seen.token, null);
        assert.equal(seen.signal.aborted, true, 'the term ended with runLocked');
        assert.equal(lock.isHeld(), false);
        assert.ok(took(await other.tryLock()), 'released after the throw');
        await other.unlock();
        assert.equal(await lock.runLocked(() => 'value'), 'value');
        assert.equal(lock.isHeld(), false);
      },
      requires,
    );

    conformanceCase(
      h,
      `${f.kind}: refuses a second lock() on a handle that already holds the lock`,
      async ({ lh }) => {
        const lock = f.make(lh.locks, 'job');
        await lock.lock();
        await assert.rejects(lock.lock(), (e: unknown) => isLeaseholdError(e, 'conflict'));
        await assert.rejects(lock.tryLock(), (e: unknown) => isLeaseholdError(e, 'conflict'));
        assert.equal(lock.isHeld(), true, 'the refused calls left the term alone');
        await lock.unlock();
        await lock.lock();
        assert.equal(lock.isHeld(), true, 'a new term after unlock');
        await lock.unlock();
      },
      requires,
    );

    if (f.kind === 'lease') return;

    conformanceCase(
      h,
      `${f.kind}: fires the holder's signal with lease_lost when its connection goes away`,
      async ({ engine, lh, clock, peer }) => {
        const other: Engine = await peer();
        const holder = f.make(new LockManager(other, clock), 'job');
        await holder.lock();
        const signal = holder.signal;
        await other.close();
        assert.equal(signal.aborted, true);
        assert.ok(isLeaseholdError(signal.reason, 'lease_lost'));
        assert.equal(holder.isHeld(), false);
        assert.equal(await holder.unlock(), false);
        if (other === engine) return; // memory: the peer is this engine, now closed
        const next = f.make(lh.locks, 'job');
        await within(next.lock(), LIVENESS_MS, 'the lock freed by the dropped connection');
        await next.unlock();
      },
      requires,
    );

    conformanceCase(
      h,
      `${f.kind}: frees the lock and signals the holder when its backend is terminated`,
      async ({ engine, lh }) => {
        const lock = f.make(lh.locks, 'job') as AnyLock & { backendPid: number | null };
        const token = await lock.lock();
        assert.ok(lock.backendPid);
        assert.ok(engine instanceof PostgresEngine);
        const waiter = f.make(lh.locks, 'job');
        const waiting = waiter.lock();
        await engine.pool.query('SELECT pg_terminate_backend($1)', [lock.backendPid]);
        await waitFor('the holder signal', () => lock.signal.aborted);
        assert.ok(isLeaseholdError(lock.signal.reason, 'lease_lost'));
        const next = await within(waiting, LIVENESS_MS, 'the waiter');
        if (f.fenced) assert.ok((next as number) > (token as number), `${next} > ${token}`);
        await waiter.unlock();
      },
      { requires: [...f.requires, 'crossProcess'], engine: 'postgres' },
    );
  });

  if (f.kind !== 'session') return;
  describe(`[${h.name}] toolkit: session lock tokens`, () => {
    conformanceCase(
      h,
      'session: hands out a strictly higher token on every term, across handles and waits',
      async ({ lh }) => {
        const a = lh.locks.session('job');
        const b = lh.locks.session('job');
        const tokens: number[] = [];
        tokens.push(await a.lock());
        await a.unlock();
        tokens.push((await b.tryLock()) ?? 0);
        const waiting = a.lock();
        await b.unlock();
        tokens.push(await within(waiting, LIVENESS_MS, 'the waiting session lock'));
        await a.unlock();
        tokens.push(await b.runLocked((token) => token));
        for (let i = 1; i < tokens.length; i++)
          assert.ok(tokens[i]! > tokens[i - 1]!, `tokens rise: ${tokens.join(', ')}`);
      },
      { requires: ['sessionLocks'] },
    );
  });
}

// ttl 9 s, renew every 3 s, margin 0.9 s: trust deadline = sentAt + 8.1 s.
const RENEWING = { ttl: 9_000, renewEvery: 3_000 };
const TRUST_MS = 9_000 - 900;

function leaseFlavourCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: lease lock timing`, () => {
    conformanceCase(
      h,
      'lease: auto-renews past its ttl with the same token, and stays exclusive',
      async ({ lh, clock }) => {
        const renewals = new EventQueue<Lease>();
        const lock = lh.locks.lease('job', { ...RENEWING, onRenewed: renewals.push });
        const token = await lock.lock();
        for (let i = 1; i <= 4; i++) {
          await clock.advance(3_000);
          const lease = await renewals.next(LIVENESS_MS, `renewal ${i}`);
          assert.equal(lease.token, token);
          assert.equal(lease.renewCount, i);
        }
        // 12 s in, well past the 9 s ttl.
        assert.equal(lock.isHeld(), true);
        assert.equal(lock.signal.aborted, false);
        assert.equal(lock.lease?.token, token);
        assert.equal(await lh.locks.lease('job', { ttl: 1_000 }).tryLock(), null);
        assert.equal((await lock.current())?.holder, lock.holder);
        await lock.unlock();
      },
    );

    conformanceCase(
      h,
      'lease: fires the signal with lease_lost at the trust deadline when renewals hang',
      async ({ engine, clock, lh }) => {
        const faulty = faultyEngine(engine);
        const lost = new EventQueue<LeaseLostError>();
        const lock = new LockManager(faulty.engine, clock).lease('job', {
          ...RENEWING,
          onLost: lost.push,
        });
        // Settled into a value at once, so the rejection is never unhandled while time moves.
        const run = lock
          .runLocked(
            (_token, signal) =>
              new Promise<string>((resolve) =>
                signal.addEventListener('abort', () => resolve('stopped'), { once: true }),
              ),
          )
          .catch((error: unknown) => error);
        await waitFor('the lock to be held', () => lock.isHeld());
        faulty.set('leaseLockRenew', 'hang');
        await clock.advance(TRUST_MS - 1);
        assert.equal(lock.signal.aborted, false, 'trusted until the deadline');
        await clock.advance(1);
        assert.equal(lock.signal.aborted, true, 'aborted exactly at the trust deadline');
        assert.ok(isLeaseholdError(lock.signal.reason, 'lease_lost'));
        assert.equal(await lost.next(), lock.signal.reason);
        assert.equal(lock.isHeld(), false);
        // fn returned normally, but its effects may not have been exclusive: runLocked says so.
        assert.ok(isLeaseholdError(await run, 'lease_lost'));
        // The database still holds the term until its own expiry; then the next holder gets it.
        assert.equal(await lh.locks.lease('job', { ttl: TTL }).tryLock(), null);
        await clock.advance(9_000 - TRUST_MS);
        assert.ok(await lh.locks.lease('job', { ttl: TTL }).tryLock());
      },
    );

    conformanceCase(
      h,
      'lease: without autoRenew the term ends at ttl - margin and is never renewed',
      async ({ engine, clock }) => {
        const faulty = faultyEngine(engine);
        const lock = new LockManager(faulty.engine, clock).lease('job', {
          ttl: 9_000,
          autoRenew: false,
        });
        await lock.lock();
        await clock.advance(TRUST_MS - 1);
        assert.equal(lock.isHeld(), true);
        await clock.advance(1);
        assert.equal(lock.isHeld(), false);
        assert.ok(isLeaseholdError(lock.signal.reason, 'lease_lost'));
        await clock.advance(60_000);
        assert.equal(faulty.calls('leaseLockRenew'), 0);
        assert.equal(clock.pendingTimers(), 0, 'no timer left behind');
        assert.equal(await lock.unlock(), false);
      },
    );

    conformanceCase(
      h,
      'lease: keeps the lock closed for the quiet period after an unlock, its holder included',
      async ({ lh, clock }) => {
        const a = lh.locks.lease('job', { ttl: TTL, quietPeriod: '3s' });
        const b = lh.locks.lease('job', { ttl: TTL, autoRenew: false });
        const first = await a.lock();
        await a.unlock();
        assert.equal(await b.tryLock(), null);
        assert.equal(await a.tryLock(), null, 'the quiet period applies to the old holder too');
        await clock.advance(2_999);
        assert.equal(await b.tryLock(), null);
        await clock.advance(1);
        assert.equal(await b.tryLock(), first + 1);
      },
    );

    conformanceCase(
      h,
      'lease: a waiting lock() sleeps until the quiet period ends, then takes the lock',
      async (ctx) => {
        const { lh, clock } = ctx;
        const a = lh.locks.lease('job', { ttl: TTL, quietPeriod: '3s' });
        await a.lock();
        await a.unlock();
        const b = lh.locks.lease('job', { ttl: TTL, autoRenew: false });
        const before = clock.pendingTimers();
        const waiting = b.lock();
        const flag = settledFlag(waiting);
        await untilWaiting(ctx, 'lease', 'job', before);
        await clock.advance(2_999);
        assert.equal(flag.settled, false, 'asleep until the gap ends');
        await clock.advance(1);
        assert.equal(await within(waiting, LIVENESS_MS, 'the lock after the quiet period'), 2);
      },
    );

    conformanceCase(
      h,
      'lease: an early unlock keeps the lock until acquiredAt + lockAtLeast',
      async ({ lh, clock }) => {
        const a = lh.locks.lease('job', { ttl: TTL, lockAtLeast: '5s' });
        const b = lh.locks.lease('job', { ttl: TTL, autoRenew: false });
        await a.runLocked(async () => {
          await clock.advance(1_000);
        });
        assert.equal(a.isHeld(), false, 'the handle let go');
        assert.equal(a.signal.aborted, true);
        assert.equal((await a.current())?.state, 'released');
        await clock.advance(3_999);
        assert.equal(await b.tryLock(), null, 'closed until 5 s after acquisition');
        await clock.advance(1);
        assert.equal(await b.tryLock(), 2);
        await b.unlock();
        // A term that already lasted longer than lockAtLeast is released at once.
        await a.lock();
        await clock.advance(6_000);
        await a.unlock();
        assert.equal(await b.tryLock(), 4);
      },
    );

    conformanceCase(
      h,
      'lease: applies the lock delay after the holder failed, but not after an unlock',
      async ({ lh, clock }) => {
        const failing = lh.locks.lease('job', { ttl: TTL, autoRenew: false, lockDelay: '4s' });
        await failing.lock();
        await clock.advance(TTL);
        assert.equal(failing.isHeld(), false);
        const next = lh.locks.lease('job', { ttl: TTL, autoRenew: false, lockDelay: '4s' });
        assert.equal(await next.tryLock(), null, 'expired, but the lock delay runs');
        await clock.advance(3_999);
        assert.equal(await next.tryLock(), null);
        await clock.advance(1);
        assert.equal(await next.tryLock(), 2);
        await next.unlock();
        const third = lh.locks.lease('job', { ttl: TTL, autoRenew: false });
        assert.equal(await third.tryLock(), 3, 'a clean unlock has no delay');
      },
    );

    conformanceCase(
      h,
      'lease: lock() rejects with code timeout on the injected clock',
      async (ctx) => {
        const { lh, clock } = ctx;
        const holder = lh.locks.lease('job', { ttl: 60_000, autoRenew: false });
        await holder.lock();
        const waiter = lh.locks.lease('job', { ttl: TTL, pollEvery: '1s' });
        const waiting = waiter.lock({ timeout: '5s' });
        const flag = settledFlag(waiting);
        await clock.advance(4_999);
        assert.equal(flag.settled, false);
        await clock.advance(1);
        await assert.rejects(
          within(waiting, LIVENESS_MS, 'the timed-out lock()'),
          (e: unknown) => isLeaseholdError(e, 'timeout') && /5s/.test((e as Error).message),
        );
        assert.equal((await holder.current())?.holder, holder.holder);
      },
    );
  });
}

function validationCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: lock options`, () => {
    conformanceCase(
      h,
      'rejects bad lock names and options with invalid_argument naming the field',
      async ({ lh, engine }) => {
        const field = (name: string) => (e: unknown) =>
          isLeaseholdError(e, 'invalid_argument') && e.details.field === name;
        // Where a flavour is missing, its constructor refuses it with unsupported before any check.
        if (engine.capabilities.advisoryLocks)
          assert.throws(() => lh.locks.advisory(''), field('name'));
        if (engine.capabilities.sessionLocks)
          assert.throws(() => lh.locks.session(42 as unknown as string), field('name'));
        assert.throws(() => lh.locks.lease('job', {} as { ttl: number }), field('ttl'));
        assert.throws(() => lh.locks.lease('job', { ttl: 5 }), field('ttl'));
        assert.throws(
          () => lh.locks.lease('job', { ttl: TTL, quietPeriod: -1 }),
          field('quietPeriod'),
        );
        assert.throws(
          () => lh.locks.lease('job', { ttl: TTL, lockAtLeast: 'soon' }),
          field('lockAtLeast'),
        );
        assert.throws(
          () => lh.locks.lease('job', { ttl: TTL, lockDelay: '2 days' }),
          field('lockDelay'),
        );
        assert.throws(
          () => lh.locks.lease('job', { ttl: TTL, autoRenew: false, renewEvery: 1_000 }),
          field('renewEvery'),
        );
        assert.throws(
          () => lh.locks.lease('job', { ttl: TTL, renewEvery: TTL }),
          field('renewEvery'),
        );
        assert.throws(() => lh.locks.lease('job', { ttl: TTL, holder: '' }), field('holder'));
        assert.throws(() => lh.locks.lease('job', { ttl: TTL, pollEvery: 0 }), field('pollEvery'));
        const lock = lh.locks.lease('job', { ttl: TTL });
        await assert.rejects(lock.lock({ timeout: 'soon' }), field('timeout'));
        await assert.rejects(lock.lock({ signal: {} as unknown as AbortSignal }), field('signal'));
        assert.ok(await lock.tryLock(), 'a refused option leaves the handle usable');
        await lock.unlock();
      },
    );
  });
}
