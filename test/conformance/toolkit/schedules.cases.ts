/**
 * Toolkit-level cases for schedules (`lh.schedule`), on the ManualClock: every slot runs once
 * across instances, runs never overlap, lockAtLeast/lockAtMost, the three modes, cron slots,
 * missed and caught-up slots, validation, and close().
 *
 * The clock moves in steps; after each step the case waits until every engine call started by
 * the step has settled (PostgreSQL answers in real time while the ManualClock stands still).
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { ManualClock } from '../../../src/core/clock.js';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { FencingToken } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import { Leasehold } from '../../../src/leasehold.js';
import { Schedule, type ScheduleEvents } from '../../../src/schedules/schedule.js';
import type { ScheduleOptions } from '../../../src/schedules/schedule-options.js';
import type { ScheduledFunction, ScheduledRun } from '../../../src/schedules/slot-run.js';
import { cronSlots, slotAfter } from '../../../src/schedules/slots.js';
import { faultyEngine } from '../../support/faulty-engine.js';
import { deferred, waitFor } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';
import { pausableClock, withClock } from './election.cases.js';

const EVERY = { every: '10s' } as const;
const LEADER_TIMING = { ttl: 9_000, renewEvery: 3_000, pollEvery: 2_000 };

/** An engine whose calls in flight are counted, so a case can wait for them to settle. */
interface TrackedEngine {
  engine: Engine;
  idle(): Promise<unknown>;
}

function tracked(inner: Engine): TrackedEngine {
  let pending = 0;
  const engine = new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) {
          pending++;
          result.finally(() => pending--).catch(() => {});
        }
        return result;
      };
    },
  });
  return {
    engine,
    idle: () => waitFor('engine calls to settle', () => pending === 0, { intervalMs: 2 }),
  };
}

/** Moves the clock by `ms` in steps, letting every engine call of each step settle. */
async function step(
  clock: ManualClock,
  engines: TrackedEngine[],
  ms: number,
  stepMs = ms,
): Promise<void> {
  const settle = async () => {
    // Twice: a call that settles may start the next one (the claim after the run lock).
    for (let i = 0; i < 2; i++) await Promise.all(engines.map((e) => e.idle()));
  };
  if (ms === 0) {
    await clock.advance(0);
    await settle();
    return;
  }
  for (let moved = 0; moved < ms;) {
    const d = Math.min(stepMs, ms - moved);
    await clock.advance(d);
    moved += d;
    await settle();
  }
}

interface Run {
  slot: number;
  by: string;
  token: FencingToken;
}

type SlotEvent = ScheduleEvents['schedule:slot'];

/** Records runs (slot relative to T0) and every slot attempt of the given schedules. */
function recorder(t0: number) {
  const runs: Run[] = [];
  const attempts: SlotEvent[] = [];
  const fn: ScheduledFunction = (run: ScheduledRun) => {
    runs.push({ slot: run.slot.getTime() - t0, by: run.instanceId, token: run.token });
  };
  const observe = (...schedules: Schedule[]) => {
    for (const s of schedules) s.events.on('schedule:slot', (e) => attempts.push(e));
  };
  const outcomesAt = (slot: number) =>
    attempts
      .filter((a) => a.slot.getTime() - t0 === slot)
      .map((a) => `${a.instanceId}:${a.outcome}`)
      .sort();
  return { runs, attempts, fn, observe, outcomesAt };
}

async function claimed(schedule: Schedule, t0: number): Promise<[number, string][]> {
  return (await schedule.recent(100))
    .map((s): [number, string] => [s.slot.getTime() - t0, s.holder])
    .reverse();
}

export function scheduleCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: schedules`, () => {
    conformanceCase(
      h,
      'runs each slot once across two instances in mode lock, recorded in the database',
      async ({ engine, clock, peer }) => {
        const t0 = clock.now().getTime();
        const rec = recorder(t0);
        const ea = tracked(engine);
        const eb = tracked(await peer());
        const a = new Schedule(ea.engine, 'report', { ...EVERY, instanceId: 'a' }, rec.fn);
        const b = new Schedule(eb.engine, 'report', { ...EVERY, instanceId: 'b' }, rec.fn);
        rec.observe(a, b);
        await Promise.all([a.start(), b.start()]);
        await step(clock, [ea, eb], 0); // the slot starting right now is due
        for (let i = 0; i < 4; i++) await step(clock, [ea, eb], 10_000);

        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 10_000, 20_000, 30_000, 40_000],
          'every slot ran, once',
        );
        for (const slot of [0, 10_000, 20_000, 30_000, 40_000]) {
          const outcomes = rec.outcomesAt(slot);
          assert.equal(outcomes.length, 2, `both instances woke for slot ${slot}`);
          assert.equal(outcomes.filter((o) => o.endsWith(':ran')).length, 1, outcomes.join());
          assert.ok(
            outcomes.every((o) => /:(ran|claimed|locked)$/.test(o)),
            `the other found it claimed or locked: ${outcomes.join()}`,
          );
        }
        assert.deepEqual(
          await claimed(a, t0),
          rec.runs.map((r) => [r.slot, r.by]),
          'the database holds one claim per run, by the instance that ran it',
        );
        await Promise.all([a.close(), b.close()]);
      },
    );

    conformanceCase(
      h,
      'a schedule with `enqueue` enqueues one job per slot across two instances, keyed by the slot',
      async ({ engine, clock, peer }) => {
        const t0 = clock.now().getTime();
        const ea = tracked(engine);
        const eb = tracked(await peer());
        const enqueue = {
          queue: 'reports',
          payload: { kind: 'daily' },
          options: { maxAttempts: 7 },
        };
        const [a, b] = [ea, eb].map((e, i) =>
          Leasehold.fromEngine(e.engine).schedule('report', {
            ...EVERY,
            instanceId: `i${i}`,
            enqueue,
          }),
        ) as [Schedule, Schedule];
        try {
          await step(clock, [ea, eb], 0);
          for (let i = 0; i < 3; i++) await step(clock, [ea, eb], 10_000);
          // A slot's enqueue goes through the coalescer, which may send it a turn of the event
          // loop after the slot's claim settled: wait for the jobs, then check them exactly.
          const jobs = await waitFor('a job for each of the four slots', async () => {
            const listed = await engine.jobList({ queue: 'reports', limit: 100, offset: 0 });
            return listed.length >= 4 ? listed : null;
          });
          const slots = [0, 10_000, 20_000, 30_000].map((d) => new Date(t0 + d).toISOString());
          assert.deepEqual(
            jobs.map((j) => j.key).sort(),
            slots.map((slot) => `schedule:report:${slot}`),
            'one job per slot, whichever instance ran it',
          );
          assert.ok(
            jobs.every(
              (j) => j.maxAttempts === 7 && (j.payload as { kind: string }).kind === 'daily',
            ),
          );
          // A slot run again while its job is live answers that job, not a second one.
          const again = await Leasehold.fromEngine(engine)
            .queue('reports')
            .enqueue({ kind: 'daily' }, { key: `schedule:report:${slots[3]}` });
          assert.equal(again.created, false);
        } finally {
          await Promise.all([a.close(), b.close()]);
        }
      },
    );

    conformanceCase(
      h,
      'refuses a schedule with both or neither of a function and `enqueue`, or a bad `enqueue`',
      async ({ lh }) => {
        const fn = async (): Promise<void> => {};
        const bad: [() => unknown, string][] = [
          [() => lh.schedule('s', { ...EVERY }), 'fn'],
          [() => lh.schedule('s', null as never, fn), 'options'],
          [() => lh.schedule('s', { ...EVERY, enqueue: { queue: 'q' } }, fn), 'fn'],
          [() => lh.schedule('s', { ...EVERY, enqueue: { queue: '' } }), 'enqueue.queue'],
          [
            () =>
              lh.schedule('s', {
                ...EVERY,
                enqueue: { queue: 'q', options: { key: 'k' } as never },
              }),
            'enqueue.options',
          ],
          [
            () =>
              lh.schedule('s', {
                ...EVERY,
                enqueue: { queue: 'q', options: { debounce: '1s' } as never },
              }),
            'enqueue.options',
          ],
          [
            () =>
              lh.schedule('s', { ...EVERY, enqueue: { queue: 'q', options: { maxAttempts: 0 } } }),
            'enqueue.options.maxAttempts',
          ],
        ];
        for (const [make, field] of bad)
          assert.throws(
            make,
            (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === field,
            field,
          );
      },
    );

    conformanceCase(
      h,
      'never overlaps a run still in progress: the next slot is skipped while the run lock is held',
      async ({ engine, clock, peer }) => {
        const t0 = clock.now().getTime();
        const rec = recorder(t0);
        const gate = deferred();
        let firstSignal: AbortSignal | undefined;
        const fn: ScheduledFunction = async (run) => {
          await rec.fn(run);
          if (run.slot.getTime() === t0) {
            firstSignal = run.signal;
            await gate.promise;
          }
        };
        const options: ScheduleOptions = { ...EVERY, lockAtMost: '25s' };
        const ea = tracked(engine);
        const eb = tracked(await peer());
        const a = new Schedule(ea.engine, 'report', { ...options, instanceId: 'a' }, fn);
        const b = new Schedule(eb.engine, 'report', { ...options, instanceId: 'b' }, fn);
        rec.observe(a, b);
        await Promise.all([a.start(), b.start()]);
        await step(clock, [ea, eb], 0);
        const runner = rec.runs[0]?.by;
        assert.ok(runner);
        const other = runner === 'a' ? 'b' : 'a';

        await step(clock, [ea, eb], 10_000);
        assert.deepEqual(rec.outcomesAt(10_000), [`${other}:locked`, `${runner}:busy`].sort());
        assert.equal(firstSignal?.aborted, false, 'trusted until lockAtMost - margin (22.5 s)');
        gate.resolve();
        await step(clock, [ea, eb], 0);
        await step(clock, [ea, eb], 10_000);

        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 20_000],
        );
        assert.deepEqual(
          (await claimed(a, t0)).map(([slot]) => slot),
          [0, 20_000],
          'the skipped slot was never claimed',
        );
        await Promise.all([a.close(), b.close()]);
      },
    );

    conformanceCase(
      h,
      'keeps the run lock for lockAtLeast, so slots inside it are skipped everywhere',
      async ({ engine, clock, peer }) => {
        const t0 = clock.now().getTime();
        const rec = recorder(t0);
        const options: ScheduleOptions = { ...EVERY, lockAtLeast: '25s', lockAtMost: '30s' };
        const ea = tracked(engine);
        const eb = tracked(await peer());
        const a = new Schedule(ea.engine, 'report', { ...options, instanceId: 'a' }, rec.fn);
        const b = new Schedule(eb.engine, 'report', { ...options, instanceId: 'b' }, rec.fn);
        rec.observe(a, b);
        await Promise.all([a.start(), b.start()]);
        await step(clock, [ea, eb], 0);
        for (let i = 0; i < 3; i++) await step(clock, [ea, eb], 10_000);
        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 30_000],
        );
        assert.deepEqual(rec.outcomesAt(10_000), ['a:locked', 'b:locked']);
        assert.deepEqual(rec.outcomesAt(20_000), ['a:locked', 'b:locked']);
        await Promise.all([a.close(), b.close()]);
      },
    );

    conformanceCase(
      h,
      'mode auto never releases its run lock: it expires by itself lockAtMost after the run began',
      async ({ engine, clock }) => {
        const t0 = clock.now().getTime();
        const rec = recorder(t0);
        const e = tracked(engine);
        const a = new Schedule(
          e.engine,
          'report',
          { ...EVERY, mode: 'auto', instanceId: 'a' },
          rec.fn,
        );
        await a.start();
        await step(clock, [e], 0);
        const lock = await engine.leaseLockGet({ name: 'leasehold:schedule:report' });
        assert.equal(lock?.state, 'active', 'not released after the run');
        assert.equal(lock?.expiresAt.getTime(), t0 + 5_000, 'lockAtMost defaults to half the gap');
        await step(clock, [e], 10_000);
        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 10_000],
        );
        assert.ok(rec.runs[1]!.token > rec.runs[0]!.token, 'a new lock term per run');
        await a.close();
      },
    );

    conformanceCase(
      h,
      'mode leader runs only on the leader, and moves to another instance when the leader dies',
      async ({ engine, clock, peer }) => {
        const t0 = clock.now().getTime();
        const rec = recorder(t0);
        const ea = tracked(engine);
        const eb = tracked(await peer());
        const crash = faultyEngine(ea.engine);
        const options: ScheduleOptions = { ...EVERY, mode: 'leader', election: LEADER_TIMING };
        const a = new Schedule(crash.engine, 'report', { ...options, instanceId: 'a' }, rec.fn);
        const b = new Schedule(eb.engine, 'report', { ...options, instanceId: 'b' }, rec.fn);
        rec.observe(a, b);
        await a.start(); // a joins first and leads
        await b.start();
        assert.equal(a.election?.isLeader(), true);
        await step(clock, [ea, eb], 0);
        await step(clock, [ea, eb], 10_000, 500);
        assert.deepEqual(rec.outcomesAt(0), ['a:ran', 'b:not-leader']);
        assert.deepEqual(rec.outcomesAt(10_000), ['a:ran', 'b:not-leader']);
        const leaderToken = a.election!.token!;
        assert.ok(
          rec.runs.every((r) => r.token === leaderToken),
          'runs carry the leader token',
        );

        // a dies: none of its statements reach the database any more.
        for (const op of [
          'leaseLockAcquire',
          'leaseLockRenew',
          'leaseLockRelease',
          'scheduleSlotClaim',
        ] as const)
          crash.set(op, 'hang');
        await step(clock, [ea, eb], 40_000, 500);

        const byA = rec.runs.filter((r) => r.by === 'a').map((r) => r.slot);
        const byB = rec.runs.filter((r) => r.by === 'b');
        assert.deepEqual(byA, [0, 10_000], 'a ran nothing after it died');
        assert.deepEqual(
          byB.map((r) => r.slot).filter((s) => s >= 30_000),
          [30_000, 40_000, 50_000],
          'b took the schedule over',
        );
        assert.ok(
          byB.every((r) => r.token > leaderToken),
          'under a newer leadership',
        );
        const slots = rec.runs.map((r) => r.slot);
        assert.equal(new Set(slots).size, slots.length, 'no slot ran twice');
        await Promise.all([a.close(), b.close()]);
      },
    );

    conformanceCase(
      h,
      'computes cron slots in their time zone and runs each on time',
      async ({ engine, clock }) => {
        const t0 = clock.now().getTime();
        const every15s = cronSlots('*/15 * * * * *');
        assert.equal(every15s.firstAtOrAfter(new Date(t0))?.getTime(), t0);
        assert.equal(slotAfter(every15s, new Date(t0))?.getTime(), t0 + 15_000);
        assert.equal(every15s.latestAtOrBefore(new Date(t0 + 14_999))?.getTime(), t0);
        // 03:00 in Paris is 01:00 UTC once summer time has started (31 March 2030).
        const paris = cronSlots('0 3 * * *', 'Europe/Paris');
        assert.equal(
          paris.firstAtOrAfter(new Date('2030-03-30T12:00:00Z'))?.toISOString(),
          '2030-03-31T01:00:00.000Z',
        );
        assert.equal(
          cronSlots('0 3 * * *').firstAtOrAfter(new Date('2030-03-30T12:00:00Z'))?.toISOString(),
          '2030-03-31T03:00:00.000Z',
          'UTC by default',
        );

        const rec = recorder(t0);
        const e = tracked(engine);
        const s = new Schedule(
          e.engine,
          'cron',
          { cron: '*/15 * * * * *', instanceId: 'a' },
          rec.fn,
        );
        await s.start();
        await step(clock, [e], 0);
        await step(clock, [e], 40_000, 5_000);
        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 15_000, 30_000],
        );
        assert.deepEqual(await claimed(s, t0), [
          [0, 'a'],
          [15_000, 'a'],
          [30_000, 'a'],
        ]);
        await s.close();
      },
    );

    conformanceCase(
      h,
      'does not run a slot missed while every instance was down, unless catchUp says so',
      async ({ engine, clock, peer }) => {
        const t0 = clock.now().getTime();
        await clock.advance(5_000); // slot t0 started while nobody was running
        const rec = recorder(t0);
        const ea = tracked(engine);
        const eb = tracked(await peer());
        const plain = new Schedule(ea.engine, 'report', { ...EVERY, instanceId: 'a' }, rec.fn);
        rec.observe(plain);
        await plain.start();
        await step(clock, [ea, eb], 0);
        assert.equal(rec.runs.length, 0, 'no catch-up by default');

        const catching = new Schedule(
          eb.engine,
          'report',
          { ...EVERY, instanceId: 'b', catchUp: true },
          rec.fn,
        );
        const again = new Schedule(
          ea.engine,
          'report',
          { ...EVERY, instanceId: 'c', catchUp: true },
          rec.fn,
        );
        rec.observe(catching, again);
        await catching.start();
        await step(clock, [ea, eb], 0);
        await again.start();
        await step(clock, [ea, eb], 0);
        assert.deepEqual(
          rec.runs.map((r) => [r.slot, r.by]),
          [[0, 'b']],
          'caught up once',
        );
        assert.deepEqual(rec.outcomesAt(0), ['b:ran', 'c:claimed']);

        await step(clock, [ea, eb], 5_000);
        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 10_000],
        );
        await Promise.all([plain.close(), catching.close(), again.close()]);
      },
    );

    conformanceCase(
      h,
      'after a late wake-up runs only the newest started slot and reports the missed ones',
      async ({ engine, clock }) => {
        const t0 = clock.now().getTime();
        const rec = recorder(t0);
        const e = tracked(engine);
        const frozen = pausableClock(clock);
        const s = new Schedule(withClock(e.engine, frozen.clock), 'report', EVERY, rec.fn);
        const missed: ScheduleEvents['schedule:missed'][] = [];
        s.events.on('schedule:missed', (m) => missed.push(m));
        await s.start();
        await step(clock, [e], 0);
        frozen.pause();
        await clock.advance(35_000);
        frozen.resume();
        await step(clock, [e], 0);
        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 30_000],
        );
        assert.deepEqual(
          missed.map((m) => [m.from.getTime() - t0, m.until.getTime() - t0]),
          [[10_000, 30_000]],
        );
        await step(clock, [e], 5_000);
        assert.deepEqual(
          rec.runs.map((r) => r.slot),
          [0, 30_000, 40_000],
        );
        await s.close();
      },
    );

    conformanceCase(
      h,
      'stops on close(): aborts the run in progress, waits for it, and leaves no timer',
      async ({ lh, clock }) => {
        const started = deferred();
        let reason: unknown;
        const schedule = lh.schedule(
          'report',
          { ...EVERY, instanceId: 'a' },
          async ({ signal }) => {
            started.resolve();
            await new Promise((resolve) => signal.addEventListener('abort', resolve));
            reason = signal.reason;
          },
        );
        await schedule.start();
        await clock.advance(0);
        await started.promise;
        await lh.close();
        assert.equal(schedule.state, 'closed');
        assert.ok(isLeaseholdError(reason, 'aborted'), String(reason));
        assert.equal(clock.pendingTimers(), 0);
        await assert.rejects(schedule.start(), (e: unknown) => isLeaseholdError(e, 'closed'));
      },
    );

    conformanceCase(
      h,
      'rejects bad options with invalid_argument naming the field',
      async ({ engine }) => {
        const lh = Leasehold.fromEngine(engine);
        const noop = () => {};
        const rejects = (options: ScheduleOptions, field: string, name = 'report', fn = noop) =>
          assert.throws(
            () => lh.schedule(name, options, fn),
            (e: unknown) => {
              assert.ok(isLeaseholdError(e, 'invalid_argument'), String(e));
              assert.equal(e.details.field, field, e.message);
              return true;
            },
          );
        rejects({}, 'every');
        rejects({ every: '1m', cron: '* * * * *' }, 'every');
        rejects({ every: '500ms' }, 'every');
        rejects({ every: '1m', timezone: 'Europe/Paris' }, 'timezone');
        rejects({ cron: 'every day' }, 'cron');
        rejects({ cron: '61 * * * *' }, 'cron');
        rejects({ cron: '* * * * *', timezone: 'Mars/Olympus' }, 'timezone');
        rejects({ every: '1m', mode: 'sometimes' as never }, 'mode');
        rejects({ every: '1m', lockAtLeast: '2m', lockAtMost: '1m' }, 'lockAtLeast');
        rejects({ every: '1m', mode: 'auto', lockAtMost: '1m' }, 'lockAtMost');
        rejects({ every: '1m', mode: 'auto', lockAtLeast: '10s' }, 'lockAtLeast');
        rejects({ every: '1m', election: LEADER_TIMING }, 'election');
        rejects(
          { every: '1m', mode: 'leader', election: { ttl: 1_000, pollEvery: 900 } },
          'pollEvery',
        );
        rejects({ every: '1m', catchUp: 'yes' as never }, 'catchUp');
        rejects({ every: '1m' }, 'name', '');
        rejects({ every: '1m' }, 'fn', 'report', 'not a function' as never);
        await lh.close();
      },
    );
  });
}
