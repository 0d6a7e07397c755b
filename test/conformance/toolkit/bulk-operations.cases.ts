import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { Job, JobStatus } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { JobSpec } from '../../../src/engine/jobs.js';
import { EventQueue } from '../../support/events.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 30_000;
const MINUTE = 60_000;

/**
 * Operations over many jobs (issue 27 part 5, decision 0250): `retryAll`, `cancelAll` and
 * `deleteAll` on `lh.queue(name)`, through the library so the batch loop is covered too, with
 * the engine's batches checked directly where their answer matters. Each filter field narrows;
 * batches change everything that matches and answer the total; jobs of other queues are never
 * touched; delete leaves processing jobs; bad input changes nothing.
 */
export function bulkOperationCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: operations over many jobs`, () => {
    conformanceCase(
      h,
      'each filter field narrows: status, type, key, partition key and the creation time range',
      async ({ lh, engine, clock }) => {
        const t0 = clock.now().getTime();
        const [j1, j2] = await enqueue(
          engine,
          spec({ type: 'a', key: 'k1', partitionKey: 'p1' }),
          spec({ type: 'b' }),
        );
        await clock.advance(MINUTE);
        const [j3] = await enqueue(engine, spec({ type: 'a', partitionKey: 'p2' }));
        await clock.advance(MINUTE);
        const [j4, j5, j6, other] = await enqueue(
          engine,
          spec({ type: 'a' }),
          spec(),
          spec({ partitionKey: 'p3' }),
          spec({ queue: 'other', type: 'a', key: 'k1', partitionKey: 'p1' }),
        );
        const q = lh.queue('q');

        // [since, before): j4 was created exactly at the upper bound, so it is left out.
        const range = {
          createdSince: new Date(t0 + MINUTE),
          createdBefore: new Date(t0 + 2 * MINUTE),
        };
        assert.equal(await q.cancelAll(range), 1);
        assert.equal(await q.cancelAll({ type: 'b' }), 1);
        assert.equal(await q.cancelAll({ key: 'k1' }), 1);
        assert.equal(await q.cancelAll({ partitionKey: 'p3' }), 1);
        assert.equal(await q.cancelAll({ status: 'pending', type: 'a' }), 1);
        assert.equal(await q.cancelAll({ status: 'processing' }), 0, 'none is processing');
        assert.deepEqual(await statuses(engine, j1, j2, j3, j4, j5, j6, other), [
          'cancelled',
          'cancelled',
          'cancelled',
          'cancelled',
          'pending',
          'cancelled',
          'pending',
        ]);
        // An ISO string bound works as a Date does; with no status, every final status is retried.
        const since = new Date(t0 + MINUTE).toISOString();
        assert.equal(await q.retryAll({ type: 'a', createdSince: since }), 2, 'j3 and j4');
        const retried = await engine.jobGet({ id: j3!.id });
        assert.equal(retried?.status, 'pending');
        assert.equal(retried?.attempts, 0);
        assert.equal(retried?.finishedAt, null);
        assert.equal(await q.deleteAll({ status: 'cancelled' }), 3, 'j1, j2 and j6');
        assert.equal(await q.deleteAll({ status: ['cancelled', 'dead'] }), 0);
        assert.equal(await q.deleteAll({ createdBefore: new Date(t0 + 1) }), 0);
        assert.equal(await q.cancelAll({ status: ['pending'] }), 3, 'j3, j4, j5');
        assert.deepEqual(await statuses(engine, j3, j4, j5, other), [
          'cancelled',
          'cancelled',
          'cancelled',
          'pending',
        ]);
        assert.equal(await lh.queue('other').deleteAll(), 1, 'its own queue only');
      },
    );

    conformanceCase(
      h,
      'works in batches: batch size 2 over 5 matching jobs changes all 5, newest first, each batch reading a bounded number of jobs',
      async ({ lh, engine }) => {
        const jobs = await enqueue(engine, ...Array.from({ length: 5 }, () => spec()));
        const [others] = await enqueue(engine, spec({ queue: 'other' }), spec({ queue: 'other' }));
        const q = lh.queue('q');
        assert.equal(await q.cancelAll({}, { batchSize: 2 }), 5);
        assert.equal(await q.retryAll({ status: 'cancelled' }, { batchSize: 2 }), 5);
        assert.deepEqual(await statuses(engine, ...jobs), Array(5).fill('pending'));
        assert.equal(await q.deleteAll({ status: 'pending' }, { batchSize: 2 }), 5);
        assert.deepEqual(await statuses(engine, ...jobs), Array(5).fill(undefined));
        assert.equal((await engine.jobGet({ id: others!.id }))?.status, 'pending');

        // The engine's batches: the newest `limit` below `beforeId`, and where the next starts.
        const four = await enqueue(engine, ...Array.from({ length: 4 }, () => spec()));
        const match = { queue: 'q', statuses: ['pending'] as JobStatus[] };
        const first = await engine.jobCancelMatching({ match, limit: 2 });
        assert.deepEqual(first, { changed: 2, next: four[2]!.id });
        assert.deepEqual(await statuses(engine, ...four), [
          'pending',
          'pending',
          'cancelled',
          'cancelled',
        ]);
        const second = await engine.jobCancelMatching({ match, limit: 2, beforeId: first.next! });
        assert.deepEqual(second, { changed: 2, next: four[0]!.id }, 'a full batch: maybe more');
        const last = await engine.jobCancelMatching({ match, limit: 2, beforeId: second.next! });
        assert.deepEqual(last, { changed: 0, next: null });
        // A batch reads at most SCAN_FACTOR (10) x limit jobs: sparse matches take more batches.
        const [needle] = await enqueue(engine, spec());
        const hay = await enqueue(
          engine,
          ...Array.from({ length: 12 }, () => spec({ queue: 'other' })),
        );
        const sparse = await engine.jobCancelMatching({ match, limit: 1 });
        assert.deepEqual(sparse, { changed: 0, next: hay[2]!.id }, 'ten jobs read, none matched');
        assert.deepEqual(
          await engine.jobCancelMatching({ match, limit: 1, beforeId: sparse.next! }),
          {
            changed: 1,
            next: needle!.id,
          },
        );
        assert.equal(await lh.queue('other').cancelAll({}, { batchSize: 1 }), 14);
      },
    );

    conformanceCase(
      h,
      'delete leaves processing jobs; cancel takes them, and their holder is refused',
      async ({ lh, engine }) => {
        const [running, waiting, done] = await enqueue(engine, spec(), spec(), spec());
        const [claimed] = await engine.jobClaimBatch({
          queues: ['q'],
          workerId: 'w1',
          limit: 1,
          leaseTtlMs: TTL,
        });
        assert.equal(claimed?.id, running!.id);
        await engine.jobCancel({ id: done!.id });
        const q = lh.queue('q');
        assert.equal(await q.deleteAll(), 2, 'the pending and the cancelled job');
        assert.deepEqual(await statuses(engine, running, waiting, done), [
          'processing',
          undefined,
          undefined,
        ]);
        assert.equal(await q.cancelAll({ status: 'processing' }), 1);
        assert.equal((await engine.jobGet({ id: running!.id }))?.status, 'cancelled');
        assert.deepEqual(
          await engine.jobRenewLeases({
            workerId: 'w1',
            jobs: [{ id: claimed!.id, generation: claimed!.generation }],
            leaseTtlMs: TTL,
          }),
          [],
          'the worker loses the job at its next renewal',
        );
        assert.deepEqual(
          await engine.jobComplete({
            workerId: 'w1',
            jobs: [{ id: claimed!.id, generation: claimed!.generation }],
          }),
          [],
        );
      },
    );

    conformanceCase(
      h,
      'retry leaves a job whose key a live job holds, and retries the newest of a key, across batches',
      async ({ lh, engine }) => {
        const dead = async (s: JobSpec): Promise<Job> => {
          const [job] = await enqueue(engine, { ...s, maxAttempts: 1 });
          const [claimed] = await engine.jobClaimBatch({
            queues: ['q'],
            workerId: 'w1',
            limit: 1,
            leaseTtlMs: TTL,
          });
          assert.equal(claimed?.id, job!.id);
          await engine.jobFail({
            workerId: 'w1',
            jobs: [
              { id: job!.id, generation: claimed!.generation, error: 'boom', retryDelayMs: 0 },
            ],
          });
          return job!;
        };
        const oldK = await dead(spec({ key: 'k' }));
        const newK = await dead(spec({ key: 'k' }));
        const deadTaken = await dead(spec({ key: 'taken' }));
        const [liveTaken] = await enqueue(engine, spec({ key: 'taken', delayMs: MINUTE }));
        const plain = await dead(spec());
        const q = lh.queue('q');
        assert.equal(await q.retryAll({ status: 'dead' }, { batchSize: 1 }), 2);
        assert.deepEqual(await statuses(engine, oldK, newK, deadTaken, liveTaken, plain), [
          'dead',
          'pending',
          'dead',
          'pending',
          'pending',
        ]);
        assert.equal(await q.retryAll({ status: 'dead' }), 0, 'their keys are live now');
        // All in one batch: the same choice.
        await q.cancelAll();
        assert.equal(await q.retryAll(), 3, 'one job per key, and the plain one');
        assert.deepEqual(await statuses(engine, oldK, newK, deadTaken, liveTaken, plain), [
          'dead',
          'pending',
          'dead',
          'pending',
          'pending',
        ]);
      },
    );

    conformanceCase(
      h,
      'bad input is invalid_argument naming the field, and changes nothing',
      async ({ lh, engine }) => {
        await enqueue(engine, spec(), spec({ type: 'a' }), spec({ queue: 'other' }));
        const [cancelled] = await enqueue(engine, spec({ key: 'k' }));
        await engine.jobCancel({ id: cancelled!.id });
        const before = await engine.jobList({ limit: 100, offset: 0 });
        const q = lh.queue('q');
        const refusals: [string, () => Promise<number>][] = [
          ['color', () => q.cancelAll({ color: 'red' } as never)],
          ['status', () => q.retryAll({ status: 'pending' })],
          ['status', () => q.retryAll({ status: ['dead', 'processing'] })],
          ['status', () => q.cancelAll({ status: 'dead' })],
          ['status', () => q.deleteAll({ status: 'processing' })],
          ['status', () => q.deleteAll({ status: [] })],
          ['status', () => q.deleteAll({ status: 'gone' as JobStatus })],
          ['type', () => q.deleteAll({ type: '' })],
          ['key', () => q.deleteAll({ key: 7 as never })],
          ['partitionKey', () => q.deleteAll({ partitionKey: null as never })],
          ['createdSince', () => q.deleteAll({ createdSince: 'yesterday' })],
          ['createdSince', () => q.deleteAll({ createdSince: '2024-05-01T12:00:00' })],
          ['createdBefore', () => q.deleteAll({ createdBefore: new Date(Number.NaN) })],
          [
            'createdBefore',
            () =>
              q.deleteAll({
                createdSince: '2024-05-01T00:00:00Z',
                createdBefore: '2024-05-01',
              }),
          ],
          ['filter', () => q.deleteAll('everything' as never)],
          ['batchSize', () => q.deleteAll({}, { batchSize: 0 })],
          ['batchSize', () => q.deleteAll({}, { batchSize: 10_001 })],
          ['batchSize', () => q.deleteAll({}, { batchSize: 1.5 })],
        ];
        for (const [field, call] of refusals)
          await assert.rejects(
            call(),
            (e: unknown) =>
              isLeaseholdError(e, 'invalid_argument') &&
              (e.details as { field?: string }).field === field &&
              e.message.startsWith(`${field}: `),
            `refused, naming ${field}`,
          );
        assert.deepEqual(await engine.jobList({ limit: 100, offset: 0 }), before);
      },
    );

    conformanceCase(
      h,
      'announces retried jobs on topic jobs once per batch, not per job',
      async ({ lh, engine }) => {
        const jobs = await enqueue(engine, spec(), spec(), spec());
        for (const job of jobs) await engine.jobCancel({ id: job.id });
        const woken = new EventQueue<string>();
        await engine.notifyListen({ topic: 'jobs', onNotify: woken.push });
        assert.equal(await lh.queue('q').retryAll(), 3);
        await engine.notifySend({ topic: 'jobs', payload: 'marker' });
        assert.equal(await woken.next(), 'q');
        assert.equal(await woken.next(), 'marker', 'one notification for three jobs');
      },
      { requires: ['notifications'] },
    );
  });
}

function spec(overrides: Partial<JobSpec> = {}): JobSpec {
  return { queue: 'q', payload: {}, maxAttempts: 3, ...overrides };
}

async function enqueue(engine: Engine, ...specs: JobSpec[]): Promise<Job[]> {
  return (await engine.jobEnqueue({ jobs: specs })).map((o) => o.job);
}

/** Each job's status now, undefined when it is gone. */
async function statuses(
  engine: Engine,
  ...jobs: (Job | undefined)[]
): Promise<(JobStatus | undefined)[]> {
  return Promise.all(jobs.map(async (job) => (await engine.jobGet({ id: job!.id }))?.status));
}
