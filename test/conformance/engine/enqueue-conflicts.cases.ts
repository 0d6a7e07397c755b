import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { Job } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { JobSpec } from '../../../src/engine/jobs.js';
import { EventQueue } from '../../support/events.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 30_000;

/**
 * An enqueue meeting the live job of its key (decision 0252): `keep` answers it, `replace`
 * overwrites it while pending, a debounce pushes its run time out and, against a running job,
 * takes the key over for one more run.
 */
export function enqueueConflictEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: enqueue conflicts (keep, replace, debounce)`, () => {
    conformanceCase(
      h,
      'keep answers the pending job unchanged; replace overwrites its fields and run time, keeping its id, partition and attempts',
      async ({ engine, clock }) => {
        const t0 = clock.now().getTime();
        const [first] = await engine.jobEnqueue({
          jobs: [
            spec({
              payload: 'a',
              type: 't1',
              headers: { h: '1' },
              partitionKey: 'p',
              priority: 1,
            }),
          ],
        });
        assert.deepEqual(flags(first!), [true, false]);
        const original = first!.job;

        const [kept] = await engine.jobEnqueue({
          jobs: [spec({ payload: 'b', onConflict: 'keep', priority: 9 })],
        });
        assert.deepEqual(flags(kept!), [false, false]);
        assert.deepEqual(kept!.job, original, 'keep changes nothing');

        await clock.advance(1_000);
        const [replaced] = await engine.jobEnqueue({
          jobs: [
            spec({
              payload: { c: 3 },
              onConflict: 'replace',
              type: 't2',
              headers: { h: '2' },
              partitionKey: 'elsewhere',
              priority: 5,
              maxAttempts: 7,
              timeoutMs: 900,
              delayMs: 60_000,
            }),
          ],
        });
        assert.deepEqual(flags(replaced!), [false, true]);
        const job = replaced!.job;
        assert.equal(job.id, original.id, 'the same job: its place in line is kept');
        assert.deepEqual(
          [job.payload, job.type, job.headers, job.priority, job.maxAttempts, job.timeoutMs],
          [{ c: 3 }, 't2', { h: '2' }, 5, 7, 900],
        );
        assert.equal(job.partitionKey, 'p', 'the partition is the creating enqueue’s');
        assert.equal(job.availableAt.getTime(), t0 + 1_000 + 60_000);
        assert.equal(job.createdAt.getTime(), t0);
        assert.equal(job.updatedAt.getTime(), t0 + 1_000);
        assert.equal(job.status, 'pending');
        assert.equal(job.attempts, 0);
        assert.deepEqual(await engine.jobGet({ id: job.id }), job, 'answered as stored');
        assert.deepEqual(await claim(engine), [], 'the new run time holds it back');

        // Replacing with no delay makes it claimable now, with the newest payload.
        const [now] = await engine.jobEnqueue({
          jobs: [spec({ payload: 'd', onConflict: 'replace' })],
        });
        assert.deepEqual(flags(now!), [false, true]);
        const [claimed] = await claim(engine);
        assert.equal(claimed?.id, original.id);
        assert.equal(claimed?.payload, 'd');
        assert.equal((await engine.jobList({ queue: 'q', limit: 10, offset: 0 })).length, 1);
      },
    );

    conformanceCase(
      h,
      'replace never touches a running job; a debounce takes its key over for one more run',
      async ({ engine, clock }) => {
        await engine.jobEnqueue({ jobs: [spec({ payload: 'run 1' })] });
        const [running] = await claim(engine);
        assert.ok(running);
        await clock.advance(10);

        const [replace] = await engine.jobEnqueue({
          jobs: [spec({ payload: 'x', onConflict: 'replace' })],
        });
        assert.deepEqual(flags(replace!), [false, false]);
        assert.deepEqual(replace!.job, running, 'answered as it is');
        assert.deepEqual(await engine.jobGet({ id: running.id }), running, 'and left as it is');

        const t = clock.now().getTime();
        const [debounced] = await engine.jobEnqueue({ jobs: [debounce('run 2', 1_000)] });
        assert.deepEqual(flags(debounced!), [true, false]);
        const next = debounced!.job;
        assert.notEqual(next.id, running.id);
        assert.equal(next.key, 'k', 'the new job holds the key');
        assert.equal(next.availableAt.getTime(), t + 1_000);
        const old = await engine.jobGet({ id: running.id });
        assert.deepEqual(
          { ...old, key: running.key, updatedAt: running.updatedAt },
          running,
          'the run goes on: only its key is given up',
        );
        assert.equal(old?.key, null);

        // Further enqueues meet the new job: a debounce replaces it, keep answers it.
        const [again] = await engine.jobEnqueue({ jobs: [debounce('run 2b', 1_000)] });
        assert.deepEqual(flags(again!), [false, true]);
        assert.equal(again!.job.id, next.id);
        const [kept] = await engine.jobEnqueue({ jobs: [spec({ payload: 'ignored' })] });
        assert.equal(kept!.job.id, next.id);

        // The running job's owner still completes it (its fencing is untouched).
        assert.deepEqual(
          await engine.jobComplete({
            workerId: 'w1',
            jobs: [{ id: running.id, generation: running.generation }],
          }),
          [running.id],
        );
        await clock.advance(1_000);
        const [second] = await claim(engine);
        assert.equal(second?.id, next.id);
        assert.equal(second?.payload, 'run 2b');
      },
    );

    conformanceCase(
      h,
      'debounce pushes the run time out on every enqueue; the job runs once, with the last payload',
      async ({ engine, clock }) => {
        const t0 = clock.now().getTime();
        const [first] = await engine.jobEnqueue({ jobs: [debounce(1, 1_000)] });
        assert.deepEqual(flags(first!), [true, false]);
        await clock.advance(600);
        const [second] = await engine.jobEnqueue({ jobs: [debounce(2, 1_000)] });
        assert.deepEqual(flags(second!), [false, true]);
        assert.equal(second!.job.availableAt.getTime(), t0 + 1_600);
        await clock.advance(600);
        assert.deepEqual(await claim(engine), [], 'not yet: 1s after the last enqueue');
        await clock.advance(400);
        const claimed = await claim(engine);
        assert.deepEqual(
          claimed.map((j) => [j.id, j.payload]),
          [[first!.job.id, 2]],
        );
        assert.deepEqual(await claim(engine, 'w2'), [], 'once');
      },
    );

    conformanceCase(
      h,
      'folds the specs of one key in a batch: the last replacing one wins, all answered as the call left the job',
      async ({ engine }) => {
        const outcomes = await engine.jobEnqueue({
          jobs: [
            spec({ payload: 1, onConflict: 'replace', partitionKey: 'p' }),
            spec({ payload: 2 }),
            spec({ key: 'other', payload: 'o' }),
            spec({ payload: 3, onConflict: 'replace', partitionKey: 'ignored' }),
            spec({ key: null, payload: 'no key' }),
          ],
        });
        assert.deepEqual(outcomes.map(flags), [
          [true, false],
          [false, false],
          [true, false],
          [false, true],
          [true, false],
        ]);
        const job = outcomes[0]!.job;
        for (const i of [1, 3]) assert.deepEqual(outcomes[i]!.job, job);
        assert.equal(job.payload, 3);
        assert.equal(job.partitionKey, 'p');
        assert.deepEqual(await engine.jobGet({ id: job.id }), job);
        assert.equal((await engine.jobList({ queue: 'q', limit: 10, offset: 0 })).length, 3);

        // Against the now pending job: a keep leader and a replacing follower replace it.
        const later = await engine.jobEnqueue({
          jobs: [spec({ payload: 4 }), spec({ payload: 5, onConflict: 'replace' })],
        });
        assert.deepEqual(later.map(flags), [
          [false, false],
          [false, true],
        ]);
        assert.equal(later[0]!.job.payload, 5);
      },
    );

    conformanceCase(
      h,
      'never loses a debounce racing a claim on another connection: the last payload is pending under the key',
      async ({ engine, peer }) => {
        const other = await peer();
        for (let round = 0; round < 8; round++) {
          const key = `race${round}`;
          await engine.jobEnqueue({ jobs: [spec({ key, payload: 'first' })] });
          const [[outcome], claimed] = await Promise.all([
            engine.jobEnqueue({ jobs: [{ ...debounce('last', 1_000), key }] }),
            other.jobClaimBatch({ queues: ['q'], workerId: 'w', limit: 1, leaseTtlMs: TTL }),
          ]);
          // Either the claim came first (one more run, created) or the debounce did (replaced).
          assert.deepEqual(flags(outcome!), claimed.length === 1 ? [true, false] : [false, true]);
          const live = (await engine.jobList({ queue: 'q', limit: 100, offset: 0 })).filter(
            (j) => j.key === key,
          );
          assert.deepEqual(
            live.map((j) => [j.status, j.payload]),
            [['pending', 'last']],
          );
          if (claimed[0]) {
            await other.jobComplete({
              workerId: 'w',
              jobs: [{ id: claimed[0].id, generation: claimed[0].generation }],
            });
          }
        }
      },
    );

    conformanceCase(
      h,
      'announces a replaced job that becomes claimable now, not one whose run is pushed out',
      async ({ engine }) => {
        await engine.jobEnqueue({ jobs: [spec({ delayMs: 60_000 })] });
        const woken = new EventQueue<string>();
        await engine.notifyListen({ topic: 'jobs', onNotify: woken.push });
        await engine.jobEnqueue({ jobs: [debounce('later', 5_000)] });
        await engine.notifySend({ topic: 'jobs', payload: 'after debounce' });
        assert.equal(await woken.next(), 'after debounce', 'a pushed-out run wakes no one');
        await engine.jobEnqueue({ jobs: [spec({ payload: 'now', onConflict: 'replace' })] });
        await engine.notifySend({ topic: 'jobs', payload: 'after replace' });
        assert.equal(await woken.next(), 'q');
        assert.equal(await woken.next(), 'after replace');
      },
      { requires: ['notifications'] },
    );
  });
}

function spec(overrides: Partial<JobSpec> = {}): JobSpec {
  return { queue: 'q', key: 'k', payload: {}, maxAttempts: 3, ...overrides };
}

/** What toJobSpec makes of `{ key: 'k', debounce }`. */
function debounce(payload: unknown, ms: number): JobSpec {
  return spec({ payload, delayMs: ms, onConflict: 'replace', debounce: true });
}

function flags(o: { created: boolean; replaced: boolean }): [boolean, boolean] {
  return [o.created, o.replaced];
}

function claim(engine: Engine, workerId = 'w1'): Promise<Job[]> {
  return engine.jobClaimBatch({ queues: ['q'], workerId, limit: 10, leaseTtlMs: TTL });
}
