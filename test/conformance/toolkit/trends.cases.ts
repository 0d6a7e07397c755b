import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { InvalidArgumentError } from '../../../src/core/errors.js';
import { Maintainer } from '../../../src/queue/maintenance/maintainer.js';
import { pumpUntil } from '../../support/manual-time.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const MINUTE = 60_000;

/** The maintainer records and prunes the trends; lh.jobs.trends() answers the charts' series. */
export function trendCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: trends`, () => {
    conformanceCase(
      h,
      'the maintainer records the minute under way each cycle and prunes minutes past the retention',
      async ({ lh, engine, clock }) => {
        await clock.advance(MINUTE - (clock.now().getTime() % MINUTE) + 10_000); // hh:mm:10
        const first = new Date(clock.now().getTime() - 10_000);
        const maintainer = new Maintainer(engine, { clock, trendsRetention: '10m' });
        const job = await lh.queue('mail').enqueue({ to: 'a' });
        const [claimed] = await engine.jobClaimBatch({
          queues: ['mail'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: 30_000,
        });
        await clock.advance(2_000);
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: job.id, generation: claimed!.generation }],
        });
        const cycle = await maintainer.runOnce();
        assert.equal(cycle.trends, 1);
        assert.equal(cycle['prune-trends'], 0);
        let series = await lh.jobs.trends();
        assert.equal(series.points.length, 60);
        assert.equal(series.stepMinutes, 1);
        const last = series.points.at(-1)!;
        assert.equal(last.at.getTime(), first.getTime());
        assert.equal(last.completed, 1);
        assert.equal(last.failureRate, 0);
        assert.deepEqual(
          series.points.slice(0, -1).filter((p) => p.completed > 0),
          [],
        );
        assert.deepEqual(
          series.latest.map((r) => [r.queue, r.minute.getTime(), r.completed]),
          [['mail', first.getTime(), 1]],
        );
        // A backlog in another queue, seen in the next cycle of the same minute.
        await lh.queue('report').enqueue({});
        assert.equal((await maintainer.runOnce()).trends, 2);
        series = await lh.jobs.trends({ queue: 'report' });
        assert.deepEqual(series.points.at(-1)!.depth, { waiting: 0, pending: 1, processing: 0 });
        assert.equal(series.points.at(-1)!.completed, 0);
        // Eleven minutes on, the first minute is past the ten-minute retention.
        await clock.advance(11 * MINUTE);
        const later = await maintainer.runOnce();
        assert.equal(later['prune-trends'], 2);
        const rows = await engine.trendsList({ from: first, to: clock.now() });
        assert.ok(rows.every((r) => r.minute.getTime() > first.getTime()));
      },
    );

    conformanceCase(
      h,
      'counts the jobs of a worker with removeOnComplete and of acks with removeOnAck (decision 0270)',
      async ({ lh, clock }) => {
        await clock.advance(MINUTE - (clock.now().getTime() % MINUTE) + 10_000); // hh:mm:10
        const maintainer = new Maintainer(lh.engine, { clock });
        await lh.queue('fast').enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: i })));
        const worker = lh.worker({
          queues: 'fast',
          removeOnComplete: true,
          concurrency: 5,
          pollInterval: 200,
          flushWindow: 0,
          handler: async () => 'done',
        });
        await worker.start();
        try {
          await pumpUntil(
            clock,
            'the five jobs deleted',
            async () => {
              const left = await lh.jobs.search({ queue: 'fast' });
              return left.jobs.length === 0;
            },
            { stepMs: 20 },
          );
        } finally {
          await worker.stop();
        }
        const pulled = lh.queue('pulled');
        await pulled.enqueueMany([{ payload: 1 }, { payload: 2 }]);
        for (const message of await pulled.receiveMany({
          max: 2,
          visibility: '5s',
          removeOnAck: true,
        }))
          await message.ack();
        await maintainer.runOnce();
        const fast = (await lh.jobs.trends({ queue: 'fast' })).points.at(-1)!;
        assert.equal(fast.completed, 5, 'throughput of a queue that keeps no finished job');
        assert.equal(fast.started, 5);
        assert.ok(fast.pickupP50Ms !== null, 'a pickup latency from the tallied starts');
        const acked = (await lh.jobs.trends({ queue: 'pulled' })).points.at(-1)!;
        assert.equal(acked.completed, 2);
      },
    );

    conformanceCase(
      h,
      'a day is 288 points of five minutes, a maintainer with trends off writes none, bad options are refused',
      async ({ lh, engine, clock }) => {
        await lh.queue('q').enqueue({});
        const off = new Maintainer(engine, { clock, trends: false });
        const cycle = await off.runOnce();
        assert.equal(cycle.trends, 0);
        assert.deepEqual(await engine.trendsList({ from: new Date(0), to: clock.now() }), []);
        const day = await lh.jobs.trends({ window: '1d' });
        assert.equal(day.points.length, 288);
        assert.equal(day.stepMinutes, 5);
        assert.equal(day.to.getTime() - day.from.getTime(), 1440 * MINUTE);
        assert.ok(day.points.every((p) => p.completed === 0 && p.depth === null));
        const refused = (options: unknown, field: string) =>
          assert.rejects(
            lh.jobs.trends(options as never),
            (e: unknown) => e instanceof InvalidArgumentError && e.field === field,
          );
        await refused({ window: '2h' }, 'window');
        await refused({ queue: '' }, 'queue');
        assert.throws(
          () => new Maintainer(engine, { trendsCatchUpMinutes: 0 }),
          (e: unknown) => e instanceof InvalidArgumentError && e.field === 'trendsCatchUpMinutes',
        );
        assert.throws(
          () => new Maintainer(engine, { trendsRetention: '1s' }),
          (e: unknown) => e instanceof InvalidArgumentError && e.field === 'trendsRetention',
        );
      },
    );
  });
}
