import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { defaultQueueSettings, type Job } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { JobSpec } from '../../../src/engine/jobs.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 30_000;

/**
 * Queue settings and the limits every claim enforces (decision 0239): pause, a concurrency cap
 * across every claimer, perKeyConcurrency (1 by default, N, or none), and a sliding-window
 * rate, each on the engine's clock.
 */
export function queueSettingsEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: queue settings and claim limits`, () => {
    conformanceCase(h, 'answers the defaults for a queue never configured', async ({ engine }) => {
      assert.deepEqual(await engine.queueSettingsGet({ queue: 'q' }), defaultQueueSettings('q'));
      assert.deepEqual(await engine.queueSettingsList(), []);
    });

    conformanceCase(
      h,
      'changes only the fields named, keeps them, and lists configured queues by name',
      async ({ engine }) => {
        await engine.queueConfigure({ queue: 'q', change: { concurrency: 5 } });
        const after = await engine.queueConfigure({
          queue: 'q',
          change: { rate: { limit: 10, per: 1_000 } },
        });
        const expected = {
          ...defaultQueueSettings('q'),
          concurrency: 5,
          rate: { limit: 10, per: 1_000 },
        };
        assert.deepEqual(after, expected);
        assert.deepEqual(await engine.queueSettingsGet({ queue: 'q' }), expected);
        await engine.queueConfigure({ queue: 'b', change: { paused: true } });
        assert.deepEqual(
          (await engine.queueSettingsList()).map((s) => s.queue),
          ['b', 'q'],
        );
        // null removes a limit; back at the defaults the queue is no longer listed
        await engine.queueConfigure({ queue: 'q', change: { concurrency: null, rate: null } });
        assert.deepEqual(await engine.queueSettingsGet({ queue: 'q' }), defaultQueueSettings('q'));
        assert.deepEqual(
          (await engine.queueSettingsList()).map((s) => s.queue),
          ['b'],
        );
      },
    );

    conformanceCase(
      h,
      'a paused queue starts nothing, other queues still run, and resume lets it start',
      async ({ engine }) => {
        await enqueue(engine, spec('q'), spec('q'), spec('other'));
        await engine.queueConfigure({ queue: 'q', change: { paused: true } });
        await enqueue(engine, spec('q')); // enqueue still works while paused
        const claimed = await claim(engine, 'w', ['q', 'other']);
        assert.deepEqual(
          claimed.map((j) => j.queue),
          ['other'],
        );
        assert.equal((await engine.queueSettingsGet({ queue: 'q' })).paused, true);
        await engine.queueConfigure({ queue: 'q', change: { paused: false } });
        assert.equal((await claim(engine, 'w', ['q'])).length, 3);
      },
    );

    conformanceCase(
      h,
      'concurrency caps processing jobs across claimers, and a finished job frees its place',
      async ({ engine }) => {
        await engine.queueConfigure({ queue: 'q', change: { concurrency: 3 } });
        await enqueue(engine, ...Array.from({ length: 8 }, () => spec('q')));
        const first = await claim(engine, 'a', ['q'], 2);
        const second = await claim(engine, 'b', ['q'], 10);
        assert.equal(first.length, 2);
        assert.equal(second.length, 1, 'only one place left of three');
        assert.equal((await claim(engine, 'c', ['q'], 10)).length, 0);
        await engine.jobComplete({
          workerId: 'a',
          jobs: [{ id: first[0]!.id, generation: first[0]!.generation }],
        });
        assert.equal((await claim(engine, 'c', ['q'], 10)).length, 1);
        // raising the cap lets more start at once; lowering it below the running count starts none
        await engine.queueConfigure({ queue: 'q', change: { concurrency: 5 } });
        assert.equal((await claim(engine, 'c', ['q'], 10)).length, 2);
        await engine.queueConfigure({ queue: 'q', change: { concurrency: 1 } });
        await engine.jobComplete({
          workerId: 'a',
          jobs: [{ id: first[1]!.id, generation: first[1]!.generation }],
        });
        assert.equal((await claim(engine, 'c', ['q'], 10)).length, 0, '4 still run, cap 1');
      },
    );

    conformanceCase(
      h,
      'jobs already running when a cap is set count against it',
      async ({ engine }) => {
        await enqueue(engine, ...Array.from({ length: 6 }, () => spec('q')));
        assert.equal((await claim(engine, 'a', ['q'], 4)).length, 4);
        await engine.queueConfigure({ queue: 'q', change: { concurrency: 5 } });
        assert.equal((await claim(engine, 'b', ['q'], 10)).length, 1);
      },
    );

    conformanceCase(
      h,
      'perKeyConcurrency N runs up to N jobs of a key at once, oldest first; null removes the cap',
      async ({ engine }) => {
        await engine.queueConfigure({ queue: 'q', change: { perKeyConcurrency: 2 } });
        const jobs = await enqueue(
          engine,
          ...Array.from({ length: 4 }, () => spec('q', 'k')),
          ...Array.from({ length: 3 }, () => spec('q', 'm')),
        );
        const claimed = await claim(engine, 'a', ['q'], 10);
        assert.deepEqual(ids(claimed), [jobs[0]!.id, jobs[1]!.id, jobs[4]!.id, jobs[5]!.id]);
        assert.equal((await claim(engine, 'b', ['q'], 10)).length, 0);
        await engine.jobComplete({
          workerId: 'a',
          jobs: [
            { id: jobs[0]!.id, generation: claimed.find((j) => j.id === jobs[0]!.id)!.generation },
          ],
        });
        assert.deepEqual(ids(await claim(engine, 'b', ['q'], 10)), [jobs[2]!.id]);
        await engine.queueConfigure({ queue: 'q', change: { perKeyConcurrency: null } });
        assert.deepEqual(ids(await claim(engine, 'b', ['q'], 10)), [jobs[3]!.id, jobs[6]!.id]);
      },
    );

    conformanceCase(
      h,
      'the default of one per key keeps a key in order, as without settings',
      async ({ engine }) => {
        await engine.queueConfigure({ queue: 'q', change: { concurrency: 10 } });
        const jobs = await enqueue(engine, spec('q', 'k'), spec('q', 'k'), spec('q'));
        assert.deepEqual(ids(await claim(engine, 'a', ['q'], 10)), [jobs[0]!.id, jobs[2]!.id]);
      },
    );

    conformanceCase(
      h,
      'rate: at most limit starts in any window of per, on the engine clock',
      async ({ engine, clock }) => {
        await engine.queueConfigure({ queue: 'q', change: { rate: { limit: 3, per: 1_000 } } });
        await enqueue(engine, ...Array.from({ length: 10 }, () => spec('q')));
        assert.equal((await claim(engine, 'a', ['q'], 2)).length, 2);
        await clock.advance(400);
        assert.equal((await claim(engine, 'a', ['q'], 10)).length, 1, 'third start of the window');
        assert.equal((await claim(engine, 'a', ['q'], 10)).length, 0);
        await clock.advance(601); // the first two starts (t=0) left the window; the third (t=400) not
        assert.equal((await claim(engine, 'a', ['q'], 10)).length, 2);
        await clock.advance(400); // t=1401: the start at 400 left
        assert.equal((await claim(engine, 'a', ['q'], 10)).length, 1);
        // a lowered limit is in force at once: three starts in the window, limit now 1
        await engine.queueConfigure({ queue: 'q', change: { rate: { limit: 1, per: 1_000 } } });
        assert.equal((await claim(engine, 'a', ['q'], 10)).length, 0);
        await clock.advance(1_000);
        assert.equal((await claim(engine, 'a', ['q'], 10)).length, 1);
      },
    );

    conformanceCase(
      h,
      "fairness 'key' takes every key's first job before any key's second",
      async ({ engine }) => {
        await engine.queueConfigure({
          queue: 'q',
          change: { fairness: 'key', perKeyConcurrency: null },
        });
        const big = await enqueue(engine, ...Array.from({ length: 30 }, () => spec('q', 'big')));
        const small = await enqueue(engine, spec('q', 'small'), spec('q', 'small'));
        const [loose] = await enqueue(engine, spec('q'));
        const first = await claim(engine, 'a', ['q'], 3);
        assert.deepEqual(ids(first), [big[0]!.id, small[0]!.id, loose!.id]);
        const second = await claim(engine, 'a', ['q'], 2);
        assert.deepEqual(ids(second), [big[1]!.id, small[1]!.id]);
        // oldest first again: the big key's backlog comes before anything enqueued later
        await engine.queueConfigure({ queue: 'q', change: { fairness: 'oldest' } });
        const [late] = await enqueue(engine, spec('q', 'late'));
        const third = await claim(engine, 'a', ['q'], 2);
        assert.deepEqual(ids(third), [big[2]!.id, big[3]!.id]);
        assert.notEqual(third[0]!.id, late!.id);
      },
    );

    // --- explain -----------------------------------------------------------------------------
    conformanceCase(
      h,
      'explain names why a pending job waits: scheduled, backoff, not pending, no worker, ready',
      async ({ engine, clock }) => {
        const [later] = await enqueue(engine, { ...spec('q'), delayMs: 60_000 });
        assert.deepEqual(await engine.jobExplain({ id: later!.id }), {
          reason: 'scheduled',
          until: new Date(clock.now().getTime() + 60_000),
        });
        const [now] = await enqueue(engine, spec('q'));
        assert.deepEqual(await engine.jobExplain({ id: now!.id }), { reason: 'no-worker' });
        await register(engine, ['other', 'q']);
        assert.deepEqual(await engine.jobExplain({ id: now!.id }), { reason: 'ready' });
        const [claimed] = await claim(engine, 'w', ['q'], 1);
        assert.equal(claimed!.id, now!.id);
        assert.deepEqual(await engine.jobExplain({ id: now!.id }), {
          reason: 'not-pending',
          status: 'processing',
        });
        await engine.jobFail({
          workerId: 'w',
          jobs: [
            { id: claimed!.id, generation: claimed!.generation, error: 'x', retryDelayMs: 5_000 },
          ],
        });
        assert.deepEqual(await engine.jobExplain({ id: now!.id }), {
          reason: 'backoff',
          until: new Date(clock.now().getTime() + 5_000),
        });
        assert.equal(await engine.jobExplain({ id: 999_999 }), null);
        assert.equal(await engine.jobExplain({ id: now!.id, queue: 'other' }), null);
      },
    );

    conformanceCase(
      h,
      'explain names the limit that holds a job back: paused, partition, concurrency, rate',
      async ({ engine, clock }) => {
        await register(engine, ['q']);
        const [head, second] = await enqueue(engine, spec('q', 'k'), spec('q', 'k'));
        assert.deepEqual(await engine.jobExplain({ id: second!.id }), {
          reason: 'partition',
          behind: head!.id,
        });
        await engine.queueConfigure({ queue: 'q', change: { paused: true } });
        assert.deepEqual(await engine.jobExplain({ id: head!.id }), { reason: 'paused' });
        await engine.queueConfigure({ queue: 'q', change: { paused: false, concurrency: 1 } });
        const [running] = await claim(engine, 'w', ['q'], 1);
        assert.equal(running!.id, head!.id);
        const [other] = await enqueue(engine, spec('q'));
        assert.deepEqual(await engine.jobExplain({ id: other!.id }), {
          reason: 'concurrency',
          inFlight: 1,
          limit: 1,
        });
        await engine.queueConfigure({
          queue: 'q',
          change: { concurrency: null, rate: { limit: 1, per: 10_000 } },
        });
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: running!.id, generation: running!.generation }],
        });
        const startedAt = clock.now().getTime();
        assert.equal((await claim(engine, 'w', ['q'], 1)).length, 1); // the window's one start
        await clock.advance(2_000);
        const [rest] = await enqueue(engine, spec('q'));
        assert.deepEqual(await engine.jobExplain({ id: rest!.id }), {
          reason: 'rate',
          nextSlotAt: new Date(startedAt + 10_000),
          limit: 1,
          per: 10_000,
        });
      },
    );
  });
}

function spec(queue: string, partitionKey?: string): JobSpec {
  return { queue, payload: {}, maxAttempts: 3, ...(partitionKey ? { partitionKey } : {}) };
}

async function enqueue(engine: Engine, ...specs: JobSpec[]): Promise<Job[]> {
  return (await engine.jobEnqueue({ jobs: specs })).map((o) => o.job);
}

function claim(engine: Engine, workerId: string, queues: string[], limit = 10): Promise<Job[]> {
  return engine.jobClaimBatch({ queues, workerId, limit, leaseTtlMs: TTL });
}

function register(engine: Engine, queues: string[]): Promise<unknown> {
  return engine.workerRegister({ id: 'w', name: 'w', host: 'h', pid: 1, queues, concurrency: 1 });
}

function ids(jobs: readonly Job[]): number[] {
  return jobs.map((j) => j.id).sort((a, b) => a - b);
}
