import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { ManualClock } from '../../../src/core/clock.js';
import { pickupBucket, pickupBucketValue } from '../../../src/core/pickup-buckets.js';
import { weightedPercentileCont } from '../../../src/core/trends.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const MINUTE = 60_000;

async function nextMinute(clock: ManualClock): Promise<Date> {
  const ms = clock.now().getTime();
  await clock.advance(MINUTE - (ms % MINUTE));
  return clock.now();
}

/** The instant `minutes` whole minutes after `m`. */
const after = (m: Date, minutes: number): Date => new Date(m.getTime() + minutes * MINUTE);

async function enqueue(engine: Engine, queue: string): Promise<number> {
  const [outcome] = await engine.jobEnqueue({ jobs: [{ queue, payload: null, maxAttempts: 3 }] });
  return outcome!.job.id;
}

async function claim(engine: Engine, queue: string, limit = 10) {
  return engine.jobClaimBatch({ queues: [queue], workerId: 'w', limit, leaseTtlMs: 60_000 });
}

/**
 * Jobs deleted as they complete (decision 0270): the deleting call tallies what the trends
 * would have read from the row (the completion, the latest claim's start by pickup bucket, the
 * failed attempts), so a queue with `removeOnComplete` has trends like any other.
 */
export function trendTallyEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: trends of deleted jobs`, () => {
    conformanceCase(
      h,
      'counts a deleted completion, its earlier failure and its start, with its pickup bucketed',
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        const a = await enqueue(engine, 'q');
        const kept = await enqueue(engine, 'q');
        await clock.advance(1_000);
        const b = await enqueue(engine, 'q');
        await clock.advance(2_000);
        const first = await claim(engine, 'q'); // pickups: a 3000, kept 3000, b 2000
        assert.deepEqual(
          first.map((j) => j.id),
          [a, kept, b],
        );
        await engine.jobFail({
          workerId: 'w',
          jobs: [{ id: a, generation: first[0]!.generation, error: 'once', retryDelayMs: 0 }],
        });
        await clock.advance(500);
        const [again] = await claim(engine, 'q'); // a's latest claim: picked up after 500 ms
        assert.equal(again?.id, a);
        await clock.advance(100);
        const accepted = await engine.jobComplete({
          workerId: 'w',
          jobs: [
            { id: a, generation: again!.generation },
            { id: b, generation: first[2]!.generation },
          ],
          remove: true,
        });
        assert.deepEqual(accepted, [a, b]);
        assert.equal(await engine.jobGet({ id: a }), null, 'deleted');

        await engine.trendsRecord({ maxMinutes: 1 });
        const [row] = await engine.trendsList({ queue: 'q', from: m, to: clock.now() });
        assert.equal(row?.completed, 2, 'both deleted completions');
        assert.equal(row?.failed, 1, "a's failed first attempt, gone with its row");
        assert.equal(row?.started, 3, "a's latest claim, b's, and the kept job's");
        // The kept job's pickup is exact; the deleted ones' are their buckets' middles.
        const samples = [
          { value: pickupBucketValue(pickupBucket(500)), weight: 1 },
          { value: pickupBucketValue(pickupBucket(2_000)), weight: 1 },
          { value: 3_000, weight: 1 },
        ];
        assert.equal(row?.pickupP50Ms, weightedPercentileCont(samples, 0.5));
        assert.equal(row?.pickupP99Ms, weightedPercentileCont(samples, 0.99));
        assert.ok(Math.abs(row!.pickupP50Ms! - 2_000) / 2_000 < 0.09, 'within a bucket of 2000');
        assert.deepEqual(row?.depth, { waiting: 0, pending: 0, processing: 1 });

        // Minutes later the tallies are dropped; what they counted stays on the minute's row.
        await nextMinute(clock);
        await engine.trendsRecord({ maxMinutes: 60 });
        await nextMinute(clock);
        await engine.trendsRecord({ maxMinutes: 60 });
        const [later] = await engine.trendsList({ queue: 'q', from: m, to: after(m, 1) });
        assert.deepEqual(later, row);
      },
    );

    conformanceCase(
      h,
      'counts each deleted job once across records, and a start in an earlier minute there',
      async ({ engine, clock }) => {
        const m = await nextMinute(clock);
        const id = await enqueue(engine, 'q');
        const [job] = await claim(engine, 'q');
        // Recorded while it runs: its start is read from its row.
        await engine.trendsRecord({ maxMinutes: 60 });
        const running = await engine.trendsList({ queue: 'q', from: m, to: after(m, 1) });
        assert.equal(running[0]?.started, 1);
        const next = await nextMinute(clock);
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id, generation: job!.generation }],
          remove: true,
        });
        await engine.trendsRecord({ maxMinutes: 60 });
        const rows = await engine.trendsList({ queue: 'q', from: m, to: after(m, 2) });
        assert.deepEqual(
          rows.map((r) => [r.minute, r.started, r.completed]),
          [
            [m, 1, 0], // started once: from its row first, from its tally after
            [next, 0, 1],
          ],
        );
      },
    );

    conformanceCase(
      h,
      "holds up no other completion nor the record while a caller's transaction has a deletion open",
      async ({ engine, clock }) => {
        const pool = (engine as PostgresEngine).pool;
        const m = await nextMinute(clock);
        const x = await enqueue(engine, 'q');
        const y = await enqueue(engine, 'q');
        const [jx, jy] = await claim(engine, 'q'); // the same minute and pickup bucket
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await engine.jobComplete({
            workerId: 'w',
            jobs: [{ id: x, generation: jx!.generation }],
            remove: true,
            tx: client,
          });
          // Neither waits for the open transaction's tally rows.
          await engine.jobComplete({
            workerId: 'w',
            jobs: [{ id: y, generation: jy!.generation }],
            remove: true,
          });
          await engine.trendsRecord({ maxMinutes: 60 });
          const [before] = await engine.trendsList({ queue: 'q', from: m, to: after(m, 1) });
          assert.equal(before?.completed, 1, 'the open deletion is not seen yet');
          await client.query('COMMIT');
        } finally {
          client.release();
        }
        await engine.trendsRecord({ maxMinutes: 60 });
        const [committed] = await engine.trendsList({ queue: 'q', from: m, to: after(m, 1) });
        assert.equal(committed?.completed, 2);
        assert.equal(committed?.started, 2);
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );
  });
}
