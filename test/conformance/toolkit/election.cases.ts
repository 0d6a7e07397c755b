/**
 * Toolkit-level cases for leader election (`lh.elect`), on the ManualClock: one leader at a
 * time, sticky renewal, the trust deadline read by isLeader(), hand-over on close(), tokens
 * growing across leaders, and the validation of the timing rules.
 *
 * PostgreSQL answers in real time while the ManualClock stands still, so a case that needs a
 * statement to come back between two clock steps waits for an event (or a condition) first.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Clock, ManualClock } from '../../../src/core/clock.js';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { FencingToken } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import { Election, type ElectionEvents } from '../../../src/locks/election.js';
import type { ElectionOptions } from '../../../src/locks/election-options.js';
import { EventQueue } from '../../support/events.js';
import { faultyEngine } from '../../support/faulty-engine.js';
import { LIVENESS_MS, waitFor } from '../../support/wait.js';
import { conformanceCase, type CaseContext, type EngineHarness } from '../harness.js';

// ttl 9 s, margin 0.9 s (the default 10%): the leader trusts a term for 8.1 s after sending.
const TIMING = { ttl: 9_000, renewEvery: 3_000, pollEvery: 2_000 } as const;
const TTL_MS = 9_000;
const TRUST_MS = 8_100;
const POLL_MS = 2_000;

type Elected = ElectionEvents['election:elected'];
type Revoked = ElectionEvents['election:revoked'];

/** An election plus queues of what it reported. */
interface Watched {
  election: Election;
  elected: EventQueue<Elected>;
  revoked: EventQueue<Revoked>;
  renewed: EventQueue<ElectionEvents['election:renewed']>;
  leaders: string[];
  revokedCalls: Error[];
}

function watch(election: Election, revokedCalls: Error[] = []): Watched {
  const w: Watched = {
    election,
    elected: new EventQueue(),
    revoked: new EventQueue(),
    renewed: new EventQueue(),
    leaders: [],
    revokedCalls,
  };
  election.events.on('election:elected', w.elected.push);
  election.events.on('election:revoked', w.revoked.push);
  election.events.on('election:renewed', w.renewed.push);
  election.events.on('election:new-leader', (e) => w.leaders.push(e.leader));
  return w;
}

function watchedElection(
  engine: Engine,
  instanceId: string,
  options: ElectionOptions = {},
  name = 'leader',
): Watched {
  const revokedCalls: Error[] = [];
  const election = new Election(engine, name, {
    ...TIMING,
    instanceId,
    ...options,
    onRevoked: (reason) => revokedCalls.push(reason),
  });
  return watch(election, revokedCalls);
}

/** Another process on the same storage (the same engine, for memory). */
async function peerEngine(ctx: CaseContext): Promise<Engine> {
  return ctx.peer();
}

/**
 * Moves the clock in steps until `condition` holds, giving real-time I/O (PostgreSQL) a moment
 * between steps. Returns how far the clock moved; fails past `maxMs`.
 */
async function advanceUntil(
  clock: ManualClock,
  what: string,
  condition: () => boolean,
  { stepMs, maxMs }: { stepMs: number; maxMs: number },
): Promise<number> {
  const start = clock.monotonic();
  await waitFor(
    what,
    async () => {
      if (condition()) return true;
      if (clock.monotonic() - start >= maxMs)
        throw new Error(`${what}: not within ${maxMs} ms of clock time`);
      await clock.advance(stepMs);
      return condition();
    },
    { timeoutMs: 20_000, intervalMs: 5 },
  );
  return clock.monotonic() - start;
}

/** Lets pokes (timers of 0 ms) and real-time I/O run without moving the clock. */
async function settleUntil(clock: ManualClock, what: string, condition: () => boolean) {
  await waitFor(
    what,
    async () => {
      await clock.advance(0);
      return condition();
    },
    { timeoutMs: 10_000, intervalMs: 5 },
  );
}

function leadersOf(ws: Watched[]): string[] {
  return ws.filter((w) => w.election.isLeader()).map((w) => w.election.instanceId);
}

/** A clock whose timers can be held back, as in a process frozen by SIGSTOP or a long GC pause. */
export function pausableClock(inner: ManualClock) {
  const held: (() => void)[] = [];
  let paused = false;
  const clock: Clock = {
    now: () => inner.now(),
    monotonic: () => inner.monotonic(),
    setTimer: (delayMs, callback) =>
      inner.setTimer(delayMs, () => (paused ? held.push(callback) : callback())),
  };
  return {
    clock,
    pause: () => (paused = true),
    resume: () => {
      paused = false;
      for (const callback of held.splice(0)) callback();
    },
  };
}

/** The engine as seen by a process with its own clock. */
export function withClock(engine: Engine, clock: Clock): Engine {
  return new Proxy(engine, {
    get(target, property) {
      if (property === 'clock') return clock;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

export function electionCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: leader election`, () => {
    conformanceCase(
      h,
      'elects exactly one leader among three candidates, and the others observe it',
      async (ctx) => {
        const { engine, clock } = ctx;
        const ws = [
          watchedElection(engine, 'a'),
          watchedElection(await peerEngine(ctx), 'b'),
          watchedElection(await peerEngine(ctx), 'c'),
        ];
        await Promise.all(ws.map((w) => w.election.start()));
        const [leader, ...others] = leadersOf(ws);
        assert.ok(leader, 'someone leads after the first round');
        assert.deepEqual(others, [], 'nobody else leads');
        for (const w of ws) {
          assert.equal(w.election.observedLeader, leader);
          assert.deepEqual(w.leaders, [leader], 'onNewLeader fired once, with the leader');
        }
        const info = await ws[0]!.election.leader();
        assert.equal(info?.instanceId, leader);
        const leading = ws.find((w) => w.election.instanceId === leader)!;
        for (let i = 1; i <= 5; i++) {
          await clock.advance(3_000);
          await leading.renewed.next(LIVENESS_MS, `renewal ${i}`);
          assert.deepEqual(leadersOf(ws), [leader], `one leader after renewal ${i}`);
        }
        await Promise.all(ws.map((w) => w.election.close()));
      },
    );

    conformanceCase(
      h,
      'keeps the leadership by renewing before expiry (sticky), with the same token',
      async (ctx) => {
        const { engine, clock } = ctx;
        const a = watchedElection(engine, 'a');
        const b = watchedElection(await peerEngine(ctx), 'b');
        await a.election.start();
        await b.election.start();
        const { token } = await a.elected.next();
        for (let i = 1; i <= 5; i++) {
          await clock.advance(3_000);
          const renewed = await a.renewed.next(LIVENESS_MS, `renewal ${i}`);
          assert.equal(renewed.token, token);
        }
        // 15 s in, well past the 9 s ttl: still a's, because a renewed before each expiry.
        assert.equal(a.election.isLeader(), true);
        assert.equal(a.election.token, token);
        assert.equal(b.election.isLeader(), false);
        assert.equal(b.election.observedLeader, 'a');
        assert.equal(b.elected.length, 0, 'b was never elected');
        assert.equal((await b.election.leader())?.token, token);
        await Promise.all([a.election.close(), b.election.close()]);
      },
    );

    conformanceCase(
      h,
      'stops leading at the trust deadline when renewals hang, before anyone else may lead',
      async (ctx) => {
        const { engine, clock } = ctx;
        const faulty = faultyEngine(engine);
        let signal: AbortSignal | undefined;
        const a = watchedElection(faulty.engine, 'a', { onElected: (_t, s) => void (signal = s) });
        const b = watchedElection(await peerEngine(ctx), 'b');
        await a.election.start();
        await b.election.start();
        assert.equal(a.election.isLeader(), true);
        const { token } = await a.elected.next();
        // The database stops answering a: its renewals and its later attempts hang.
        faulty.set('leaseLockRenew', 'hang');
        faulty.set('leaseLockAcquire', 'hang');

        await clock.advance(TRUST_MS - 1);
        assert.equal(a.election.isLeader(), true, 'trusted 1 ms before the deadline');
        assert.equal(faulty.calls('leaseLockRenew'), 1, 'a renewal was sent and hangs');
        await clock.advance(1);
        assert.equal(a.election.isLeader(), false, 'not trusted at the deadline');
        assert.equal(signal?.aborted, true, 'the leadership signal fired at the deadline');
        assert.ok(isLeaseholdError(signal?.reason, 'lease_lost'));
        const revoked = await a.revoked.next();
        assert.equal(revoked.token, token);
        assert.equal(a.revokedCalls.length, 1, 'onRevoked was called');
        assert.equal(b.election.isLeader(), false, 'the term is still live in the database');

        // b takes over once the term expires, within one poll of the expiry.
        const moved = await advanceUntil(clock, 'b to lead', () => b.election.isLeader(), {
          stepMs: 100,
          maxMs: TTL_MS - TRUST_MS + 2 * POLL_MS,
        });
        assert.ok(TRUST_MS + moved >= TTL_MS, 'b led only after the expiry');
        const taken = await b.elected.next();
        assert.ok(taken.token > token, `${taken.token} > ${token}`);
        assert.equal(a.election.isLeader(), false);
        await Promise.all([a.election.close(), b.election.close()]);
      },
    );

    conformanceCase(
      h,
      'answers isLeader() from the trust deadline even when its timers are held back (a frozen process)',
      async (ctx) => {
        const { engine, clock } = ctx;
        const frozen = pausableClock(clock);
        const a = watchedElection(withClock(engine, frozen.clock), 'a');
        const b = watchedElection(await peerEngine(ctx), 'b');
        await a.election.start();
        await b.election.start();
        const { token, trustedUntil } = await a.elected.next();
        frozen.pause(); // SIGSTOP: no timer of a runs, no renewal is sent

        await clock.advance(TRUST_MS);
        assert.equal(clock.monotonic(), trustedUntil);
        assert.equal(a.election.state, 'leader', 'no timer ran: the state still says leader');
        assert.equal(a.election.isLeader(), false, 'but isLeader() reads the deadline');
        assert.equal(a.election.token, null);

        await advanceUntil(clock, 'b to lead', () => b.election.isLeader(), {
          stepMs: 100,
          maxMs: TTL_MS - TRUST_MS + 2 * POLL_MS,
        });
        frozen.resume(); // SIGCONT: the late timers run now
        await a.revoked.next();
        assert.equal(a.election.isLeader(), false);
        assert.notEqual(a.election.state, 'leader');
        assert.ok((await b.elected.next()).token > token);
        await Promise.all([a.election.close(), b.election.close()]);
      },
    );

    conformanceCase(
      h,
      'hands over at once on close(): onRevoked, release, and the candidate leads without waiting for expiry',
      async (ctx) => {
        const { engine, clock } = ctx;
        let signal: AbortSignal | undefined;
        const a = watchedElection(engine, 'a', { onElected: (_t, s) => void (signal = s) });
        const b = watchedElection(await peerEngine(ctx), 'b');
        await a.election.start();
        await b.election.start();
        const { token } = await a.elected.next();
        await clock.advance(1_000);
        const before = clock.monotonic();

        await a.election.close();
        assert.equal(a.revokedCalls.length, 1, 'onRevoked fired before close() resolved');
        assert.ok(isLeaseholdError(a.revokedCalls[0], 'aborted'));
        assert.equal(signal?.aborted, true);
        assert.equal(a.election.isLeader(), false);
        assert.equal(a.election.state, 'closed');
        const lease = await engine.leaseLockGet({ name: 'leasehold:election:leader' });
        assert.equal(lease?.state, 'released', 'released at once');

        // Woken by the release notification: no clock time passes.
        await settleUntil(clock, 'b to lead', () => b.election.isLeader());
        assert.equal(clock.monotonic(), before, 'b did not wait for the expiry');
        assert.ok((await b.elected.next()).token > token);
        await b.election.close();
      },
      { requires: ['notifications'] },
    );

    conformanceCase(h, 'hands over within one poll when notifications are lost', async (ctx) => {
      const { engine, clock } = ctx;
      const deaf = faultyEngine(await peerEngine(ctx));
      deaf.set('notifyListen', 'fail'); // b never hears the release
      const a = watchedElection(engine, 'a');
      const b = watchedElection(deaf.engine, 'b', { onError: () => {} });
      await a.election.start();
      await b.election.start();
      await a.election.close();
      const moved = await advanceUntil(clock, 'b to lead', () => b.election.isLeader(), {
        stepMs: 100,
        maxMs: 2 * POLL_MS,
      });
      assert.ok(moved < TTL_MS, `took over after ${moved} ms, before the term would expire`);
      await b.election.close();
    });

    conformanceCase(
      h,
      'gives every new leader a greater token and reports each change through onNewLeader',
      async (ctx) => {
        const { engine, clock } = ctx;
        const faulty = faultyEngine(await peerEngine(ctx));
        const a = watchedElection(engine, 'a');
        const b = watchedElection(faulty.engine, 'b');
        const tokens: FencingToken[] = [];
        const leaderOf = async (w: Watched) => tokens.push((await w.elected.next()).token);

        await a.election.start();
        await leaderOf(a);
        await b.election.start();
        // a hands over by closing.
        await a.election.close();
        await advanceUntil(clock, 'b to lead', () => b.election.isLeader(), {
          stepMs: 100,
          maxMs: 2 * POLL_MS,
        });
        await leaderOf(b);

        // b crashes (its database calls hang); a newcomer takes over after the expiry.
        const c2 = watchedElection(await peerEngine(ctx), 'c');
        await c2.election.start();
        faulty.set('leaseLockRenew', 'hang');
        faulty.set('leaseLockAcquire', 'hang');
        await advanceUntil(clock, 'c to lead', () => c2.election.isLeader(), {
          stepMs: 250,
          maxMs: TTL_MS + 2 * POLL_MS,
        });
        await leaderOf(c2);

        // c closes; a returns and leads again.
        const a2 = watchedElection(engine, 'a');
        await a2.election.start();
        await c2.election.close();
        await settleOrPoll(clock, () => a2.election.isLeader());
        await leaderOf(a2);

        for (let i = 1; i < tokens.length; i++)
          assert.ok(tokens[i]! > tokens[i - 1]!, `tokens strictly increase: ${tokens.join(', ')}`);
        assert.deepEqual(c2.leaders, ['b', 'c']);
        assert.deepEqual(a2.leaders, ['c', 'a']);
        await Promise.all([b.election.close(), a2.election.close()]);
      },
    );

    conformanceCase(
      h,
      'tells every event under its deprecated elector:* name too, the same payload, once to onAny',
      async (ctx) => {
        const { engine, clock } = ctx;
        const a = watchedElection(engine, 'a');
        const aliases: [string, unknown][] = [];
        for (const what of ['elected', 'renewed', 'revoked', 'new-leader'] as const)
          a.election.events.on(`elector:${what}`, (payload) => aliases.push([what, payload]));
        const seen: string[] = [];
        a.election.events.onAny((name) => seen.push(String(name)));
        await a.election.start();
        const elected = await a.elected.next(LIVENESS_MS, 'elected');
        await clock.advance(3_000);
        const renewed = await a.renewed.next(LIVENESS_MS, 'renewed');
        await a.election.close();
        const revoked = await a.revoked.next(LIVENESS_MS, 'revoked');
        assert.deepEqual(
          aliases.map(([what]) => what),
          ['elected', 'new-leader', 'renewed', 'revoked'],
        );
        const payloadOf = (what: string) => aliases.find(([w]) => w === what)?.[1];
        assert.equal(payloadOf('elected'), elected, 'the same payload object');
        assert.equal(payloadOf('renewed'), renewed);
        assert.equal(payloadOf('revoked'), revoked);
        assert.deepEqual(payloadOf('new-leader'), { name: 'leader', instanceId: 'a', leader: 'a' });
        assert.deepEqual(seen, [
          'election:elected',
          'election:new-leader',
          'election:renewed',
          'election:revoked',
        ]);
      },
    );

    conformanceCase(h, 'stops every timer on close(), leader and candidate alike', async (ctx) => {
      const { engine, clock } = ctx;
      const a = watchedElection(engine, 'a');
      const b = watchedElection(await peerEngine(ctx), 'b');
      await a.election.start();
      await b.election.start();
      await Promise.all([a.election.close(), b.election.close()]);
      assert.equal(clock.pendingTimers(), 0);
      await assert.rejects(a.election.start(), (e: unknown) => isLeaseholdError(e, 'closed'));
    });

    conformanceCase(
      h,
      'rejects timing that breaks ttl > renewDeadline > 1.2 × pollEvery, naming the option',
      async ({ lh }) => {
        const rejects = (options: ElectionOptions, field: string, pattern?: RegExp) =>
          assert.throws(
            () => lh.elect('e', options),
            (e: unknown) => {
              assert.ok(isLeaseholdError(e, 'invalid_argument'), String(e));
              assert.equal(e.details.field, field);
              if (pattern) assert.match(e.message, pattern);
              return true;
            },
          );
        // ttl 10 s, default margin 1 s: renewDeadline 9 s, so polls and renewals must be < 7.5 s.
        rejects({ ttl: 10_000, pollEvery: 7_500 }, 'pollEvery', /renewDeadline.*1\.2/);
        assert.ok(lh.elect('e', { ttl: 10_000, pollEvery: 7_499 }));
        rejects({ ttl: 10_000, renewEvery: 7_500 }, 'renewEvery', /renewDeadline/);
        assert.ok(lh.elect('e', { ttl: 10_000, renewEvery: 7_499 }));
        rejects({ ttl: 10_000, margin: 10_000 }, 'margin', /ttl/);
        rejects({ ttl: 10_000, margin: 0 }, 'margin');
        rejects({ ttl: 10_000, margin: 4_000, pollEvery: 5_000 }, 'pollEvery');
        rejects({ ttl: 'soon' }, 'ttl', /not a duration/);
        rejects({ ttl: 5 }, 'ttl');
        rejects({ instanceId: '' }, 'instanceId');
        rejects({ onElected: 'yes' as never }, 'onElected');
        assert.throws(
          () => lh.elect('', {}),
          (e: unknown) => isLeaseholdError(e, 'invalid_argument'),
        );
        assert.ok(lh.elect('defaults-are-valid'));
        await lh.close();
      },
    );

    conformanceCase(h, 'closes its elections when the Leasehold closes', async ({ lh, clock }) => {
      const revoked: Error[] = [];
      const election = lh.elect('leader', {
        ...TIMING,
        instanceId: 'a',
        onRevoked: (r) => revoked.push(r),
      });
      const follower = lh.elect('leader', { ...TIMING, instanceId: 'b' });
      await election.start();
      await follower.start();
      assert.equal(election.isLeader(), true);
      await lh.close();
      assert.equal(election.state, 'closed');
      assert.equal(follower.state, 'closed');
      assert.equal(revoked.length, 1);
      assert.equal(clock.pendingTimers(), 0);
    });
  });
}

/** Waits for a hand-over: at once when notifications arrive, else within a poll or two. */
async function settleOrPoll(clock: ManualClock, condition: () => boolean): Promise<void> {
  await advanceUntil(clock, 'the hand-over', condition, { stepMs: 50, maxMs: 2 * POLL_MS });
}
