import assert from 'node:assert/strict';
import { describe } from 'node:test';
import {
  JobFailedError,
  WaitTimeoutError,
  isLeaseholdError,
  type LeaseholdError,
} from '../../../src/core/errors.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { JobStatus } from '../../../src/core/types.js';
import { JOB_FINISHED_TOPIC } from '../../../src/engine/jobs.js';
import type { Leasehold } from '../../../src/leasehold.js';
import { EventQueue } from '../../support/events.js';
import { pumpFor, pumpUntil } from '../../support/manual-time.js';
import { LIVENESS_MS, waitFor, within } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/**
 * `queue.waitFor` and `lh.jobs.waitUntilFinished` on every engine (decision 0249). Time is the
 * harness's ManualClock: a wait that resolves while the clock stands still was woken by a
 * notification, since its fallback reads only run when the clock moves. Behind pgbouncer in
 * transaction mode (no LISTEN) the same cases pass on the fallback alone, the clock pumped.
 */
export function waitForCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: waitFor`, () => {
    conformanceCase(
      h,
      'resolves with the result of a job a worker completes, and at once for one already completed',
      async ({ lh, clock, engine }) => {
        const q = lh.queue('results');
        const queued = await q.enqueue({ n: 21 });
        let settled: unknown = 'pending';
        const waiting = q.waitFor<{ doubled: number }>(queued.id).then((r) => (settled = r));
        await pumpFor(clock, 50);
        assert.equal(settled, 'pending', 'nothing to answer before the job ran');
        const worker = lh.worker({
          queues: 'results',
          pollInterval: 200,
          flushWindow: 0,
          handler: async (job) => ({ doubled: (job.payload as { n: number }).n * 2 }),
        });
        await worker.start();
        try {
          await pumpUntil(clock, 'the wait to resolve', () => settled !== 'pending');
          assert.deepEqual(await waiting, { doubled: 42 });
        } finally {
          await worker.stop();
        }
        // Finished already: answered from the first read, with no clock movement.
        assert.deepEqual(await within(q.waitFor(queued.id), LIVENESS_MS, 'an immediate answer'), {
          doubled: 42,
        });
        const job = await lh.jobs.waitUntilFinished(queued.id, { timeout: 0 });
        assert.equal(job.status, 'completed');
        assert.deepEqual(job.result, { doubled: 42 });
        assert.equal((await engine.jobGet({ id: queued.id }))?.attempts, 1);
      },
    );

    conformanceCase(
      h,
      'woken by the notification of a completion, the clock standing still',
      async ({ lh, engine }) => {
        const q = lh.queue('woken');
        const queued = await q.enqueue({});
        const watched = markSeen(lh, queued.id);
        const waiting = q.waitFor(queued.id);
        await watched;
        const [claimed] = await engine.jobClaimBatch({
          queues: ['woken'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: 30_000,
        });
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: queued.id, generation: claimed!.generation, result: 'heard' }],
        });
        assert.equal(await within(waiting, 10_000, 'the wake-up'), 'heard');
      },
      { requires: ['notifications'] },
    );

    conformanceCase(
      h,
      'rejects with JobFailedError carrying the last error for a dead job and a cancelled one',
      async ({ lh, clock, engine }) => {
        const q = lh.queue('failing');
        const doomed = await q.enqueue({}, { maxAttempts: 1 });
        const dead = q.waitFor(doomed.id).catch((e: unknown) => e);
        await pumpFor(clock, 20);
        const [claimed] = await engine.jobClaimBatch({
          queues: ['failing'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: 30_000,
        });
        await engine.jobFail({
          workerId: 'w',
          jobs: [
            { id: doomed.id, generation: claimed!.generation, error: 'boom', retryDelayMs: 0 },
          ],
        });
        const error = await pumpUntil(clock, 'the dead job', () => settledValue(dead));
        assert.ok(error instanceof JobFailedError);
        assert.equal(error.code, 'job_failed');
        assert.deepEqual([error.jobId, error.status, error.lastError], [doomed.id, 'dead', 'boom']);
        assert.deepEqual(error.details, { jobId: doomed.id, status: 'dead', lastError: 'boom' });
        // Already dead: rejected from the first read.
        await assert.rejects(q.waitFor(doomed.id), (e) => e instanceof JobFailedError);

        const unwanted = await q.enqueue({}, { delay: '1h' });
        const cancelled = q.waitFor(unwanted.id).catch((e: unknown) => e);
        await pumpFor(clock, 20);
        await lh.jobs.cancel(unwanted.id);
        const refusal = await pumpUntil(clock, 'the cancelled job', () => settledValue(cancelled));
        assert.ok(refusal instanceof JobFailedError);
        assert.deepEqual([refusal.status, refusal.lastError], ['cancelled', null]);
        const job = await lh.jobs.waitUntilFinished(unwanted.id);
        assert.equal(job.status, 'cancelled', 'waitUntilFinished answers the job, not an error');
      },
    );

    conformanceCase(
      h,
      'gives up at its timeout or its signal, leaving the job as it was',
      async ({ lh, clock, engine }) => {
        const q = lh.queue('slow');
        const queued = await q.enqueue({ x: 1 }, { delay: '1h' });
        const before = await engine.jobGet({ id: queued.id });

        const timedOut = q.waitFor(queued.id, { timeout: '2s' }).catch((e: unknown) => e);
        const error = await pumpUntil(clock, 'the timeout', () => settledValue(timedOut), {
          stepMs: 20,
        });
        assert.ok(error instanceof WaitTimeoutError, String(error));
        assert.ok(isLeaseholdError(error, 'timeout'));
        assert.deepEqual(error.details, { jobId: queued.id, status: 'pending', timeoutMs: 2_000 });
        await assert.rejects(q.waitFor(queued.id, { timeout: 0 }), WaitTimeoutError);
        // waitUntilFinished answers the job as it stands instead of rejecting.
        const asIs = lh.jobs.waitUntilFinished(queued.id, { timeout: '100ms' });
        const stillPending = await pumpUntil(clock, 'waitUntilFinished to time out', () =>
          settledValue(asIs),
        );
        assert.equal((stillPending as { status: string }).status, 'pending');

        const controller = new AbortController();
        const aborted = q.waitFor(queued.id, { signal: controller.signal }).catch((e) => e);
        await pumpFor(clock, 20);
        controller.abort();
        assert.ok(isLeaseholdError(await aborted, 'aborted'));
        await assert.rejects(q.waitFor(queued.id, { signal: AbortSignal.abort() }), (e) =>
          isLeaseholdError(e, 'aborted'),
        );
        assert.deepEqual(await engine.jobGet({ id: queued.id }), before, 'the job is untouched');
      },
    );

    conformanceCase(
      h,
      'refuses bad input naming the field, and an unknown job with not_found',
      async ({ lh, clock, engine }) => {
        const q = lh.queue('strict');
        const queued = await q.enqueue({});
        const before = await engine.jobGet({ id: queued.id });
        const refusals: [unknown, unknown, string][] = [
          [queued.id, { timeout: -1 }, 'timeout'],
          [queued.id, { timeout: 'soon' }, 'timeout'],
          [queued.id, { signal: {} }, 'signal'],
          [queued.id, null, 'options'],
          [0, {}, 'jobId'],
          ['7', {}, 'jobId'],
          [1.5, {}, 'jobId'],
        ];
        for (const [id, options, field] of refusals)
          await assert.rejects(
            q.waitFor(id as number, options as object),
            (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === field,
            `${JSON.stringify(options)} of job ${String(id)} names ${field}`,
          );
        await assert.rejects(
          lh.jobs.waitUntilFinished(queued.id, { timeout: -5 }),
          (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === 'timeout',
        );
        assert.deepEqual(
          await engine.jobGet({ id: queued.id }),
          before,
          'bad input changed nothing',
        );

        const notFound = (e: unknown): boolean => isLeaseholdError(e, 'not_found');
        await assert.rejects(q.waitFor(999_999), notFound);
        await assert.rejects(lh.jobs.waitUntilFinished(999_999), notFound);
        await assert.rejects(lh.queue('other').waitFor(queued.id), notFound, 'of another queue');
        // Deleted while waited for: not_found too, not a wait forever.
        const gone = q.waitFor(queued.id).catch((e: unknown) => e);
        await pumpFor(clock, 20);
        assert.equal(await lh.jobs.delete(queued.id), true);
        const error = await pumpUntil(clock, 'the deleted job', () => settledValue(gone), {
          stepMs: 20,
        });
        assert.ok(notFound(error), String(error));
        assert.equal((error as LeaseholdError).code, 'not_found');
      },
    );

    conformanceCase(
      h,
      'engine: a finish notifies job-finished once per statement, only for watched jobs',
      async ({ engine }) => {
        const heard = new EventQueue<string>();
        await engine.notifyListen({ topic: JOB_FINISHED_TOPIC, onNotify: heard.push });
        const ids = await enqueue(engine, 'notify', 4);
        const [a, b, c, d] = ids;
        for (const id of [a!, b!, d!]) assert.equal((await engine.jobWatch({ id }))?.id, id);
        assert.equal(await engine.jobWatch({ id: 999_999 }), null);
        const claimed = await engine.jobClaimBatch({
          queues: ['notify'],
          workerId: 'w',
          limit: 3,
          leaseTtlMs: 30_000,
        });
        assert.deepEqual(
          claimed.map((j) => j.id),
          [a, b, c],
        );
        await engine.jobComplete({
          workerId: 'w',
          jobs: claimed.map((j) => ({ id: j.id, generation: j.generation })),
        });
        assert.deepEqual(
          (await heard.next())
            .split(',')
            .map(Number)
            .sort((x, y) => x - y),
          [a, b],
          'one notification naming the watched jobs of the statement',
        );
        await engine.jobCancel({ id: d! });
        assert.equal(await heard.next(), String(d));
        // An unwatched job finishing says nothing: the marker comes next.
        const [e] = await enqueue(engine, 'notify', 1);
        const [running] = await engine.jobClaimBatch({
          queues: ['notify'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: 30_000,
        });
        assert.equal(running?.id, e);
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: e!, generation: running!.generation }],
        });
        await engine.notifySend({ topic: JOB_FINISHED_TOPIC, payload: 'marker' });
        assert.equal(await heard.next(), 'marker');
        assert.equal(heard.length, 0);
        // Operations over many jobs finish jobs too: a watched one is announced.
        const [f, g] = await enqueue(engine, 'bulk', 2);
        await engine.jobWatch({ id: f! });
        await engine.jobWatch({ id: g! });
        const match = { queue: 'bulk', statuses: ['pending'] as JobStatus[] };
        await engine.jobCancelMatching({ match, limit: 1 });
        assert.equal(await heard.next(), String(g), 'the batch cancelled the newest, g');
        await engine.jobDeleteMatching({ match, limit: 10 });
        assert.equal(await heard.next(), String(f), 'the delete of f, still pending');
      },
      { requires: ['notifications'] },
    );
  });
}

/** Resolves once `lh` has marked job `id` as waited for (its jobWatch call settled). */
function markSeen(lh: Leasehold, id: number): Promise<void> {
  let seen = false;
  const off = lh.on('engine', (call) => {
    if (call.operation === 'jobWatch' && (call.params as { id: number }).id === id) seen = true;
  });
  return waitFor('the job to be marked as waited for', () => seen).then(off);
}

/** The value a promise settled with, or undefined while it has not (a poll for pumpUntil). */
function settledValue(promise: Promise<unknown>): Promise<unknown> {
  return Promise.race([promise, new Promise((r) => setImmediate(() => r(undefined)))]);
}

async function enqueue(engine: Engine, queue: string, n: number): Promise<number[]> {
  const outcomes = await engine.jobEnqueue({
    jobs: Array.from({ length: n }, (_, i) => ({ queue, payload: { i }, maxAttempts: 3 })),
  });
  return outcomes.map((o) => o.job.id);
}
