import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { ManualClock } from '../../../src/core/clock.js';
import type { Engine } from '../../../src/engine/engine.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const MINUTE = 60_000;

/** Moves the clock to the start of the next whole minute, and answers it. */
async function nextMinute(clock: ManualClock): Promise<Date> {
  const ms = clock.now().getTime();
  await clock.advance(MINUTE - (ms % MINUTE));
  return clock.now();
}

async function enqueue(engine: Engine, queue: string, maxAttempts = 3): Promise<number> {
  const [outcome] = await engine.jobEnqueue({ jobs: [{ queue, payload: null, maxAttempts }] });
  return outcome!.job.id;
}

async function claim(engine: Engine, queue: string, limit = 10) {
  return engine.jobClaimBatch({ queues: [queue], workerId: 'w', limit, leaseTtlMs: 60_000 });
}

/** The per-minute trends family: figures from the jobs, upserts, catch-up, listing, pruning. */
export function trendEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: trends`, () => {
    conformanceCase(
      h,
      "records a minute's completions, retried failures, starts with their pickup latency, and depth",
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        const a = await enqueue(engine, 'q');
        await clock.advance(1_000);
        const b = await enqueue(engine, 'q');
        await enqueue(engine, 'q'); // stays pending
        await clock.advance(2_000);
        const claimed = await claim(engine, 'q', 2);
        assert.deepEqual(
          claimed.map((j) => j.id),
          [a, b],
        );
        await clock.advance(1_000);
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: a, generation: claimed[0]!.generation }],
        });
        await engine.jobFail({
          workerId: 'w',
          jobs: [{ id: b, generation: claimed[1]!.generation, error: 'boom', retryDelayMs: 0 }],
        });
        await clock.advance(5_000);
        const recorded = await engine.trendsRecord({ maxMinutes: 60 });
        // Nothing recorded before: the record reaches back its whole span.
        assert.deepEqual(recorded, {
          from: new Date(m.getTime() - 59 * MINUTE),
          through: m,
          rows: 1,
        });
        const rows = await engine.trendsList({
          from: m,
          to: new Date(m.getTime() + MINUTE),
        });
        assert.deepEqual(rows, [
          {
            minute: m,
            queue: 'q',
            completed: 1,
            failed: 1,
            dead: 0,
            // b's claim is not on record any more: it is pending again, its failure counted
            started: 1,
            pickupP50Ms: 3_000,
            pickupP99Ms: 3_000,
            depth: { waiting: 0, pending: 2, processing: 0 },
          },
        ]);
      },
    );

    conformanceCase(
      h,
      'interpolates the pickup percentiles of running and finished jobs, and counts a dead job once',
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        const first = await enqueue(engine, 'p', 1);
        await clock.advance(1_000);
        await enqueue(engine, 'p');
        await clock.advance(1_000);
        const claimed = await claim(engine, 'p');
        assert.equal(claimed.length, 2); // pickups of 2000 and 1000 ms
        await engine.jobFail({
          workerId: 'w',
          jobs: [{ id: first, generation: claimed[0]!.generation, error: 'no', retryDelayMs: 0 }],
        });
        await engine.trendsRecord({ maxMinutes: 1 });
        const [row] = await engine.trendsList({ queue: 'p', from: m, to: clock.now() });
        assert.equal(row?.dead, 1);
        assert.equal(row?.failed, 0, "a dead job's final failure is its death, not a retry");
        assert.equal(row?.started, 2);
        assert.equal(row?.pickupP50Ms, 1_500);
        assert.equal(row?.pickupP99Ms, 1_990);
        assert.deepEqual(row?.depth, { waiting: 0, pending: 0, processing: 1 });
      },
    );

    conformanceCase(
      h,
      'rewrites the minute under way idempotently with its depth now, never lowers a count, and keeps a past depth',
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        const thisMinute = { from: m, to: new Date(m.getTime() + MINUTE) };
        const id = await enqueue(engine, 'q');
        const [job] = await claim(engine, 'q');
        await engine.jobComplete({ workerId: 'w', jobs: [{ id, generation: job!.generation }] });
        await engine.trendsRecord({ maxMinutes: 60 });
        const once = await engine.trendsList(thisMinute);
        assert.equal(once[0]?.completed, 1);
        assert.deepEqual(once[0]?.depth, { waiting: 0, pending: 0, processing: 0 });
        const backlog = await enqueue(engine, 'q'); // a backlog appears in the same minute
        assert.equal((await engine.trendsRecord({ maxMinutes: 60 })).rows, 1);
        const twice = await engine.trendsList(thisMinute);
        assert.deepEqual(twice, [
          { ...once[0]!, depth: { waiting: 0, pending: 1, processing: 0 } },
        ]);
        // The backlog deleted within the minute: its row is rewritten, no stale depth left.
        assert.equal(await engine.jobDelete({ id: backlog }), true);
        assert.equal((await engine.trendsRecord({ maxMinutes: 60 })).rows, 1);
        assert.deepEqual(await engine.trendsList(thisMinute), once);
        // The completed job deleted: what was seen stays counted.
        assert.equal(await engine.jobDelete({ id }), true);
        await enqueue(engine, 'q');
        const next = await nextMinute(clock);
        const recorded = await engine.trendsRecord({ maxMinutes: 60 });
        // From the newest minute recorded; the deleted job's minute has nothing to rewrite.
        assert.deepEqual(recorded, { from: m, through: next, rows: 1 });
        const rows = await engine.trendsList({ from: m, to: new Date(next.getTime() + MINUTE) });
        assert.deepEqual(
          rows.map((r) => [r.minute.getTime() - m.getTime(), r.completed, r.depth?.pending]),
          [
            [0, 1, 0],
            [MINUTE, 0, 1],
          ],
        );
      },
    );

    conformanceCase(
      h,
      'catches up missed minutes after a gap, at most maxMinutes back, without a past depth',
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        await engine.trendsRecord({ maxMinutes: 60 }); // nothing yet: no row
        assert.deepEqual(
          await engine.trendsList({ from: m, to: new Date(m.getTime() + MINUTE) }),
          [],
        );
        for (let i = 0; i < 5; i++) {
          const id = await enqueue(engine, 'q');
          const [job] = await claim(engine, 'q');
          await engine.jobComplete({ workerId: 'w', jobs: [{ id, generation: job!.generation }] });
          await enqueue(engine, 'other'); // a backlog of 'other', growing a job a minute
          await clock.advance(MINUTE);
        }
        // Five minutes went by unrecorded; only the last three are within reach.
        const recorded = await engine.trendsRecord({ maxMinutes: 3 });
        const current = new Date(m.getTime() + 5 * MINUTE);
        assert.deepEqual(recorded, {
          from: new Date(current.getTime() - 2 * MINUTE),
          through: current,
          rows: 3, // 'q' in minutes 3 and 4, and 'other' (its depth) in minute 5
        });
        const rows = await engine.trendsList({ from: m, to: new Date(current.getTime() + MINUTE) });
        assert.deepEqual(
          rows.map((r) => [
            (r.minute.getTime() - m.getTime()) / MINUTE,
            r.queue,
            r.completed,
            r.depth,
          ]),
          [
            [3, 'q', 1, null],
            [4, 'q', 1, null],
            [5, 'other', 0, { waiting: 0, pending: 5, processing: 0 }],
          ],
        );
      },
    );

    conformanceCase(
      h,
      'lists one queue or all, by minute then queue in code-point order, within [from, to)',
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        for (const queue of ['b', 'a', 'é', 'Z']) await enqueue(engine, queue);
        await engine.trendsRecord({ maxMinutes: 1 });
        await nextMinute(clock);
        await engine.trendsRecord({ maxMinutes: 1 });
        const all = await engine.trendsList({ from: m, to: new Date(m.getTime() + 2 * MINUTE) });
        assert.deepEqual(
          all.map((r) => `${(r.minute.getTime() - m.getTime()) / MINUTE}${r.queue}`),
          ['0Z', '0a', '0b', '0é', '1Z', '1a', '1b', '1é'],
        );
        const one = await engine.trendsList({
          queue: 'a',
          from: new Date(m.getTime() + MINUTE),
          to: new Date(m.getTime() + 2 * MINUTE),
        });
        assert.deepEqual(
          one.map((r) => [r.queue, r.minute.getTime() - m.getTime()]),
          [['a', MINUTE]],
        );
        assert.deepEqual(await engine.trendsList({ from: m, to: m }), []);
      },
    );

    conformanceCase(
      h,
      'prunes rows older than the retention, oldest first, at most limit per call',
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        await enqueue(engine, 'q');
        for (let i = 0; i < 4; i++) {
          await engine.trendsRecord({ maxMinutes: 1 });
          await clock.advance(MINUTE);
        }
        // now = m + 4 min: rows of m, m+1, m+2, m+3; older than 90 s: m, m+1 and m+2 (< m+2.5)
        assert.equal(await engine.trendsPrune({ olderThanMs: 90_000, limit: 2 }), 2);
        const left = await engine.trendsList({ from: m, to: clock.now() });
        assert.deepEqual(
          left.map((r) => (r.minute.getTime() - m.getTime()) / MINUTE),
          [2, 3],
        );
        assert.equal(await engine.trendsPrune({ olderThanMs: 90_000, limit: 10 }), 1);
        assert.equal(await engine.trendsPrune({ olderThanMs: 90_000, limit: 10 }), 0);
        assert.equal(await engine.trendsPrune({ olderThanMs: 0, limit: 0 }), 0);
      },
    );
  });
}
