/**
 * A worker's claims between its full looks are bounded (decision 0274): they pass over jobs
 * that became available well before the oldest job the last full look took. A job that turns
 * claimable with an old `available_at` while the worker keeps claiming, here a partition's next
 * job once its head finishes, must still run: the next full look takes it.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Engine } from '../../src/engine/engine.js';
import type { JobClaimParams } from '../../src/engine/jobs.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

describe('bounded claims on PostgreSQL', () => {
  it("runs a partition's next job with an old available_at while fresh jobs keep the worker claiming", () =>
    withSchema('bounded claims', async (schema) => {
      const engine = await schema.engine();
      // Every claim's bound, in the order the worker sent them (undefined: a full look), and
      // whether it took the partition's next job.
      const claims: { bound: number | undefined; tookNext: boolean }[] = [];
      const counted = Object.create(engine) as Engine;
      counted.jobClaimBatch = async (p: JobClaimParams) => {
        const claim = { bound: p.availableWithinMs, tookNext: false };
        claims.push(claim);
        const jobs = await engine.jobClaimBatch(p);
        claim.tookNext = jobs.some((job) => (job.payload as { step: string }).step === 'next');
        return jobs;
      };
      const lh = Leasehold.fromEngine(counted);
      const queue = lh.queue('q');
      // Available ten seconds ago: far below the bound of any claim that follows a full look
      // of fresh jobs (their lag, plus the time since that look, plus a second).
      const runAt = new Date(Date.now() - 10_000);
      await queue.enqueue({ step: 'head' }, { partitionKey: 'p', runAt });
      await queue.enqueue({ step: 'next' }, { partitionKey: 'p', runAt });

      let releaseHead!: () => void;
      const headHeld = new Promise<void>((resolve) => (releaseHead = resolve));
      const ran = new Set<string>();
      // The stream enqueues a fresh job each time the last one has started, so the worker keeps
      // claiming until the test ends.
      let freshStarted = (): void => {};
      const worker = lh.worker({
        queues: 'q',
        concurrency: 20,
        handler: async (job) => {
          const { step } = job.payload as { step: string };
          ran.add(step);
          if (step === 'fresh') freshStarted();
          if (step === 'head') await headHeld;
        },
      });
      await worker.start();
      let streaming = true;
      const stream = (async () => {
        while (streaming) {
          const started = new Promise<void>((resolve) => (freshStarted = resolve));
          await queue.enqueue({ step: 'fresh' });
          await started;
        }
      })();
      try {
        await waitFor('the head to start', () => ran.has('head'));
        // Two full looks after the head's: the last one before the release took fresh jobs only
        // (or nothing), so the claims that follow it pass over the next job's old available_at.
        const sinceHead = claims.length;
        await waitFor(
          'two more full looks',
          () => claims.slice(sinceHead).filter((c) => c.bound === undefined).length >= 2,
        );
        releaseHead();
        await waitFor("the partition's next job to run", () => ran.has('next'));
        const taking = claims.filter((c) => c.tookNext);
        assert.equal(taking.length, 1);
        assert.equal(taking[0]!.bound, undefined, 'a full look took it');
        assert.ok(
          claims.slice(sinceHead).some((c) => c.bound !== undefined),
          'while fresh jobs came, the claims between full looks were bounded',
        );
      } finally {
        streaming = false;
        freshStarted(); // a fresh job still waiting to start no longer holds the stream
        await stream;
        await worker.stop();
      }
    }));
});
