import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { backoffCeiling, type BackoffPolicy } from '../../../src/core/backoff.js';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { Job, JobStatus } from '../../../src/core/types.js';
import type { CallerTransaction, Engine } from '../../../src/engine/engine.js';
import type { JobLeaseRef, JobSpec } from '../../../src/engine/jobs.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { EventQueue } from '../../support/events.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 30_000;
const JOBS_TOPIC = 'jobs';
const BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 1_000 };

/**
 * The job family: enqueue and dedup, the claim path (order, partitions, fencing by
 * generation), the outcomes (complete, fail, hand-back), the operator's actions (cancel,
 * retry, delete), the reads, and the maintenance operations (rescue, prune).
 */
export function jobEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: jobs`, () => {
    // --- enqueue --------------------------------------------------------------------------
    conformanceCase(
      h,
      'enqueues a job with defaults: pending, available now, generation 0, nothing claimed',
      async ({ engine, clock }) => {
        const [outcome] = await engine.jobEnqueue({
          jobs: [{ queue: 'q', payload: { n: 1 }, maxAttempts: 3 }],
        });
        assert.ok(outcome?.created);
        const { job } = outcome;
        const now = clock.now().getTime();
        assert.equal(job.queue, 'q');
        assert.deepEqual(job.payload, { n: 1 });
        assert.equal(job.type, null);
        assert.equal(job.key, null);
        assert.deepEqual(job.headers, {});
        assert.equal(job.partitionKey, null);
        assert.equal(job.priority, 0);
        assert.equal(job.status, 'pending');
        assert.equal(job.attempts, 0);
        assert.equal(job.maxAttempts, 3);
        assert.equal(job.availableAt.getTime(), now);
        assert.equal(job.claimedBy, null);
        assert.equal(job.claimedAt, null);
        assert.equal(job.leaseExpiresAt, null);
        assert.equal(job.generation, 0);
        assert.equal(job.result, null);
        assert.equal(job.lastError, null);
        assert.deepEqual(job.errors, []);
        assert.equal(job.createdAt.getTime(), now);
        assert.equal(job.updatedAt.getTime(), now);
        assert.equal(job.finishedAt, null);
        assert.equal(job.timeoutMs, null, 'no timeout of its own: the worker decides');
        assert.deepEqual(await engine.jobGet({ id: job.id }), job);
      },
    );

    conformanceCase(
      h,
      'round-trips type, key, headers, partition, priority and any JSON payload',
      async ({ engine }) => {
        const payloads: unknown[] = [
          { nested: { list: [1, 2.5, 'три'], flag: true, none: null } },
          ['an', 'array'],
          'ünïcödé ✓ 🚀',
          42,
          null,
        ];
        const outcomes = await engine.jobEnqueue({
          jobs: payloads.map((payload, i) => ({
            queue: 'q',
            payload,
            type: 'send-email.v1',
            key: `k${i}`,
            headers: { 'trace-id': `t${i}`, tenant: 'acme' },
            partitionKey: `p${i}`,
            priority: i - 2,
            maxAttempts: 7,
            timeoutMs: (i + 1) * 1_000,
          })),
        });
        for (const [i, { job }] of outcomes.entries()) {
          const stored = await engine.jobGet({ id: job.id });
          for (const seen of [job, stored]) {
            assert.deepEqual(seen?.payload, payloads[i]);
            assert.equal(seen?.type, 'send-email.v1');
            assert.equal(seen?.key, `k${i}`);
            assert.deepEqual(seen?.headers, { 'trace-id': `t${i}`, tenant: 'acme' });
            assert.equal(seen?.partitionKey, `p${i}`);
            assert.equal(seen?.priority, i - 2);
            assert.equal(seen?.maxAttempts, 7);
            assert.equal(seen?.timeoutMs, (i + 1) * 1_000);
          }
        }
      },
    );

    conformanceCase(
      h,
      'answers a batch without keys with each job exactly as stored, whatever its options',
      async ({ engine, clock }) => {
        const runAt = new Date(clock.now().getTime() + 3_600_000);
        const specs: JobSpec[] = [
          { queue: 'q', payload: { nested: { list: [1, 2.5, 'три'] }, b: true }, maxAttempts: 1 },
          { queue: 'q', payload: null, type: 'v2', headers: { trace: 't1' }, maxAttempts: 4 },
          { queue: 'q', payload: 'text', partitionKey: 'p', priority: -3, maxAttempts: 2 },
          { queue: 'q', payload: 'slow', timeoutMs: 250, maxAttempts: 2 },
          { queue: 'other', payload: [1, [2]], delayMs: 1_500, maxAttempts: 9 },
          { queue: 'q', payload: 7, runAt, priority: 5, maxAttempts: 3 },
        ];
        const outcomes = await engine.jobEnqueue({ jobs: specs });
        assert.equal(outcomes.length, specs.length);
        const now = clock.now().getTime();
        assert.equal(outcomes[3]?.job.timeoutMs, 250);
        assert.equal(outcomes[4]?.job.availableAt.getTime(), now + 1_500);
        assert.equal(outcomes[5]?.job.availableAt.getTime(), runAt.getTime());
        for (const [i, { job, created }] of outcomes.entries()) {
          assert.ok(created);
          assert.equal(job.queue, specs[i]!.queue);
          assert.deepEqual(job.payload, specs[i]!.payload);
          assert.deepEqual(await engine.jobGet({ id: job.id }), job, `job ${i}`);
        }
      },
    );

    conformanceCase(
      h,
      'enqueues a batch in order: one outcome per spec, ids increasing',
      async ({ engine }) => {
        const outcomes = await engine.jobEnqueue({
          jobs: [0, 1, 2, 3, 4].map((n) => spec({ payload: { n } })),
        });
        assert.deepEqual(
          outcomes.map((o) => [o.created, (o.job.payload as { n: number }).n]),
          [0, 1, 2, 3, 4].map((n) => [true, n]),
        );
        const ids = outcomes.map((o) => o.job.id);
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => a - b),
        );
        assert.equal(new Set(ids).size, 5);
      },
    );

    conformanceCase(
      h,
      'returns the live job of a duplicate key with created false; other queues are independent',
      async ({ engine }) => {
        const [first] = await enqueue(engine, spec({ key: 'k', payload: 'first' }));
        const [again] = await engine.jobEnqueue({ jobs: [spec({ key: 'k', payload: 'second' })] });
        assert.equal(again?.created, false);
        assert.equal(again?.job.id, first!.id);
        assert.equal(again?.job.payload, 'first', 'the existing job is returned unchanged');
        const [elsewhere] = await engine.jobEnqueue({ jobs: [spec({ queue: 'other', key: 'k' })] });
        assert.equal(elsewhere?.created, true);

        // Still a duplicate while the job is processing.
        await claim(engine, 'w1');
        const [whileRunning] = await engine.jobEnqueue({ jobs: [spec({ key: 'k' })] });
        assert.equal(whileRunning?.created, false);
        assert.equal(whileRunning?.job.id, first!.id);
        assert.equal(whileRunning?.job.status, 'processing');
      },
    );

    conformanceCase(
      h,
      'frees a key once its job is completed, dead-lettered or cancelled',
      async ({ engine }) => {
        const [done] = await enqueue(engine, spec({ key: 'done' }));
        const [claimed] = await claim(engine, 'w1');
        assert.deepEqual(await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] }), [
          done!.id,
        ]);
        const [dead] = await enqueue(engine, spec({ key: 'dead', maxAttempts: 1 }));
        const [claimedDead] = await claim(engine, 'w1');
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(claimedDead!), error: 'boom', retryDelayMs: 0 }],
        });
        const [cancelled] = await enqueue(engine, spec({ key: 'cancelled' }));
        await engine.jobCancel({ id: cancelled!.id });

        const again = await engine.jobEnqueue({
          jobs: ['done', 'dead', 'cancelled'].map((key) => spec({ key })),
        });
        assert.deepEqual(
          again.map((o) => o.created),
          [true, true, true],
        );
        const previous = [done!.id, dead!.id, cancelled!.id];
        for (const o of again) assert.ok(!previous.includes(o.job.id), 'a new job');
      },
    );

    conformanceCase(
      h,
      'dedups duplicate keys inside one batch to the first job of the batch',
      async ({ engine }) => {
        const outcomes = await engine.jobEnqueue({
          jobs: [
            spec({ key: 'k', payload: 1 }),
            spec({ key: 'other', payload: 2 }),
            spec({ key: 'k', payload: 3 }),
          ],
        });
        assert.deepEqual(
          outcomes.map((o) => o.created),
          [true, true, false],
        );
        assert.equal(outcomes[2]?.job.id, outcomes[0]?.job.id);
        assert.equal(outcomes[2]?.job.payload, 1);
        assert.equal((await engine.jobList({ queue: 'q', limit: 10, offset: 0 })).length, 2);
      },
    );

    // --- when a job becomes claimable -----------------------------------------------------
    conformanceCase(
      h,
      'holds a delayed job until its delay has passed, and hands it out at that instant',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec({ delayMs: 5_000 }));
        assert.equal(job?.availableAt.getTime(), clock.now().getTime() + 5_000);
        await clock.advance(4_999);
        assert.deepEqual(await claim(engine, 'w1'), []);
        await clock.advance(1);
        assert.deepEqual(
          (await claim(engine, 'w1')).map((j) => j.id),
          [job!.id],
        );
      },
    );

    conformanceCase(
      h,
      'holds a job until runAt, which wins over delayMs, and runs a past runAt at once',
      async ({ engine, clock }) => {
        const runAt = new Date(clock.now().getTime() + 60_000);
        const past = new Date(clock.now().getTime() - 60_000);
        const [later, overdue] = await enqueue(
          engine,
          spec({ runAt, delayMs: 1_000, payload: 'later' }),
          spec({ runAt: past, payload: 'overdue' }),
        );
        assert.equal(later?.availableAt.getTime(), runAt.getTime());
        assert.equal(overdue?.availableAt.getTime(), past.getTime());
        assert.deepEqual(
          (await claim(engine, 'w1')).map((j) => j.id),
          [overdue!.id],
        );
        await clock.advance(59_999);
        assert.deepEqual(await claim(engine, 'w1'), []);
        await clock.advance(1);
        assert.deepEqual(
          (await claim(engine, 'w1')).map((j) => j.id),
          [later!.id],
        );
      },
    );

    conformanceCase(
      h,
      'claims by priority descending, then by available_at, then by id',
      async ({ engine, clock }) => {
        const earlier = new Date(clock.now().getTime() - 1_000);
        const jobs = await enqueue(
          engine,
          spec({ payload: 'low' }),
          spec({ payload: 'high-1', priority: 5 }),
          spec({ payload: 'low-earlier', runAt: earlier }),
          spec({ payload: 'high-2', priority: 5 }),
          spec({ payload: 'negative', priority: -1, runAt: earlier }),
        );
        const order: unknown[] = [];
        for (let i = 0; i < jobs.length; i++) {
          const [next] = await claim(engine, 'w1', { limit: 1 });
          order.push(next?.payload);
        }
        assert.deepEqual(order, ['high-1', 'high-2', 'low-earlier', 'low', 'negative']);
      },
    );

    conformanceCase(
      h,
      "hands a job's timeout to whoever claims it, through failures and an operator's retry",
      async ({ engine }) => {
        const [job] = await enqueue(engine, spec({ timeoutMs: 1_500, maxAttempts: 1 }));
        const [claimed] = await claim(engine, 'w1');
        assert.equal(claimed?.timeoutMs, 1_500, 'the claim answers it');
        assert.deepEqual(await engine.jobGet({ id: job!.id }), claimed);
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(claimed!), error: 'timed out', retryDelayMs: 0 }],
        });
        const retried = await engine.jobRetry({ id: job!.id });
        assert.equal(retried?.timeoutMs, 1_500);
        const [again] = await claim(engine, 'w2');
        assert.equal(again?.timeoutMs, 1_500);
      },
    );

    conformanceCase(
      h,
      'bumps generation and attempts on a claim and sets the owner and the lease',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec());
        const [claimed] = await claim(engine, 'w1');
        assert.equal(claimed?.id, job!.id);
        assert.equal(claimed?.status, 'processing');
        assert.equal(claimed?.generation, 1);
        assert.equal(claimed?.attempts, 1);
        assert.equal(claimed?.claimedBy, 'w1');
        assert.equal(claimed?.claimedAt?.getTime(), clock.now().getTime());
        assert.equal(claimed?.leaseExpiresAt?.getTime(), clock.now().getTime() + TTL);
        assert.deepEqual(await engine.jobGet({ id: job!.id }), claimed);

        await engine.jobHandBack({ workerId: 'w1', jobs: [ref(claimed!)] });
        const [again] = await claim(engine, 'w2');
        assert.equal(again?.generation, 2, 'a new claim is a new term');
        assert.equal(again?.claimedBy, 'w2');
        assert.deepEqual(await engine.jobGet({ id: job!.id }), again, 'after a hand-back');
      },
    );

    conformanceCase(
      h,
      'answers a claim with the job as stored, also after a failure and after a retry',
      async ({ engine }) => {
        await enqueue(engine, spec());
        const [first] = await claim(engine, 'w1');
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(first!), error: 'boom', retryDelayMs: 0 }],
        });
        const [afterFailure] = await claim(engine, 'w2');
        assert.equal(afterFailure?.lastError, 'boom');
        assert.deepEqual(await engine.jobGet({ id: first!.id }), afterFailure);

        await engine.jobComplete({ workerId: 'w2', jobs: [{ ...ref(afterFailure!), result: 7 }] });
        await engine.jobRetry({ id: first!.id });
        const [afterRetry] = await claim(engine, 'w3');
        assert.equal(afterRetry?.result, null, 'a retry clears the result');
        assert.equal(afterRetry?.finishedAt, null);
        assert.deepEqual(await engine.jobGet({ id: first!.id }), afterRetry);
      },
    );

    conformanceCase(
      h,
      'claims only from the queues asked for, and at most limit jobs',
      async ({ engine }) => {
        await enqueue(
          engine,
          spec({ queue: 'a' }),
          spec({ queue: 'b' }),
          spec({ queue: 'c' }),
          spec({ queue: 'a' }),
          spec({ queue: 'b' }),
        );
        const two = await claim(engine, 'w1', { queues: ['a', 'b'], limit: 2 });
        assert.equal(two.length, 2);
        const rest = await claim(engine, 'w1', { queues: ['a', 'b'], limit: 10 });
        assert.equal(rest.length, 2);
        for (const job of [...two, ...rest]) assert.notEqual(job.queue, 'c');
        assert.deepEqual(await claim(engine, 'w1', { queues: ['a', 'b'] }), []);
        assert.equal((await claim(engine, 'w1', { queues: ['c'] })).length, 1);
      },
    );

    conformanceCase(
      h,
      'with availableWithinMs, passes over jobs available longer ago than that, of any priority',
      async ({ engine, clock }) => {
        const now = clock.now().getTime();
        const [old, oldUrgent, recent] = await enqueue(
          engine,
          spec({ runAt: new Date(now - 60_000) }),
          spec({ runAt: new Date(now - 60_000), priority: 5 }),
          spec({ runAt: new Date(now - 1_000) }),
        );
        const bounded = await engine.jobClaimBatch({
          queues: ['q'],
          workerId: 'w1',
          limit: 10,
          leaseTtlMs: TTL,
          availableWithinMs: 10_000,
        });
        assert.deepEqual(ids(bounded), [recent!.id]);
        // A claim without the bound (the worker's next full look) takes them, in order.
        const full = await claim(engine, 'w1');
        assert.deepEqual(
          full.map((j) => j.id),
          [oldUrgent!.id, old!.id],
        );
      },
    );

    conformanceCase(
      h,
      'never hands one job to two concurrent claimers; a second claimer gets the rest',
      async ({ engine, peer }) => {
        const other = await peer();
        const jobs = await enqueue(engine, ...Array.from({ length: 12 }, () => spec()));
        const batches = await Promise.all([
          claim(engine, 'w1', { limit: 5 }),
          claim(other, 'w2', { limit: 5 }),
          claim(engine, 'w3', { limit: 5 }),
          claim(other, 'w4', { limit: 5 }),
        ]);
        const claimed = batches.flat().map((j) => j.id);
        assert.equal(new Set(claimed).size, claimed.length, 'no job was claimed twice');
        assert.deepEqual(
          [...claimed].sort((a, b) => a - b),
          jobs.map((j) => j.id),
          'between them, the claimers took every job',
        );
        for (const [i, batch] of batches.entries())
          for (const job of batch) assert.equal(job.claimedBy, `w${i + 1}`);
      },
    );

    // --- renew, complete, fail, hand back: guarded by worker and generation ---------------
    conformanceCase(
      h,
      'renews only the leases the worker still owns: not a stale generation, not another worker',
      async ({ engine, clock }) => {
        const [a, b, c] = await enqueue(engine, spec(), spec(), spec());
        const [claimedA] = await claim(engine, 'w1', { limit: 1 });
        const [claimedB] = await claim(engine, 'w2', { limit: 1 });
        // C: claimed, handed back and claimed again by the same worker: generation 1 is stale.
        const [firstC] = await claim(engine, 'w1', { limit: 1 });
        await engine.jobHandBack({ workerId: 'w1', jobs: [ref(firstC!)] });
        const [secondC] = await claim(engine, 'w1', { limit: 1 });
        assert.deepEqual(
          [claimedA?.id, claimedB?.id, firstC?.id, secondC?.id],
          [a!.id, b!.id, c!.id, c!.id],
        );

        await clock.advance(10_000);
        const renewed = await engine.jobRenewLeases({
          workerId: 'w1',
          jobs: [ref(claimedA!), ref(claimedB!), ref(firstC!)],
          leaseTtlMs: 60_000,
        });
        assert.deepEqual(
          renewed.map((r) => [r.id, r.leaseExpiresAt.getTime()]),
          [[a!.id, clock.now().getTime() + 60_000]],
        );
        assert.equal(
          (await engine.jobGet({ id: a!.id }))?.leaseExpiresAt?.getTime(),
          clock.now().getTime() + 60_000,
        );
        assert.equal(
          (await engine.jobGet({ id: b!.id }))?.leaseExpiresAt?.getTime(),
          claimedB!.leaseExpiresAt!.getTime(),
          "another worker's lease is untouched",
        );
        const current = await engine.jobRenewLeases({
          workerId: 'w1',
          jobs: [ref(secondC!)],
          leaseTtlMs: TTL,
        });
        assert.deepEqual(
          current.map((r) => r.id),
          [c!.id],
        );

        // Each renewal is counted on the latest claim, with its time; refused ones are not, and
        // the next claim starts again from none (its failed claim keeps its count).
        const renewedA = await engine.jobGet({ id: a!.id });
        assert.equal(renewedA?.renewals, 1);
        assert.equal(renewedA?.renewedAt?.getTime(), clock.now().getTime());
        assert.equal((await engine.jobGet({ id: b!.id }))?.renewals, 0, 'refused: not counted');
        assert.equal((await engine.jobGet({ id: b!.id }))?.renewedAt, null);
        assert.equal(claimedA?.renewals, 0, 'a claim answers none');
        await clock.advance(1_000);
        await engine.jobRenewLeases({ workerId: 'w1', jobs: [ref(claimedA!)], leaseTtlMs: TTL });
        assert.equal((await engine.jobGet({ id: a!.id }))?.renewals, 2);
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(claimedA!), error: 'boom', retryDelayMs: 0 }],
        });
        const failed = await engine.jobGet({ id: a!.id });
        assert.equal(failed?.errors[0]?.renewals, 2, "the failed claim's renewals are kept");
        const [again] = await claim(engine, 'w3', { limit: 1 });
        assert.equal(again?.id, a!.id);
        const reclaimed = await engine.jobGet({ id: a!.id });
        assert.equal(reclaimed?.renewals, 0, 'a new claim starts from none');
        assert.equal(reclaimed?.renewedAt, null);
      },
    );

    conformanceCase(
      h,
      'refuses to renew a lease from its expiry instant on',
      async ({ engine, clock }) => {
        await enqueue(engine, spec());
        const [claimed] = await claim(engine, 'w1');
        await clock.advance(TTL - 1);
        assert.equal(
          (await engine.jobRenewLeases({ workerId: 'w1', jobs: [ref(claimed!)], leaseTtlMs: TTL }))
            .length,
          1,
        );
        await clock.advance(TTL);
        assert.deepEqual(
          await engine.jobRenewLeases({ workerId: 'w1', jobs: [ref(claimed!)], leaseTtlMs: TTL }),
          [],
        );
      },
    );

    conformanceCase(
      h,
      'stores progress only for the current, unexpired claim of the worker; a claim clears it',
      async ({ engine, clock }) => {
        const [a, b, c] = await enqueue(engine, spec(), spec(), spec());
        const [claimedA] = await claim(engine, 'w1', { limit: 1 });
        const [claimedB] = await claim(engine, 'w2', { limit: 1 });
        // C: claimed, handed back and claimed again by the same worker: generation 1 is stale.
        const [firstC] = await claim(engine, 'w1', { limit: 1 });
        await engine.jobHandBack({ workerId: 'w1', jobs: [ref(firstC!)] });
        const [secondC] = await claim(engine, 'w1', { limit: 1 });
        assert.equal(claimedA?.progress, null, 'a claimed job starts without progress');

        await clock.advance(1_000);
        const accepted = await engine.jobProgress({
          workerId: 'w1',
          jobs: [
            { ...ref(claimedB!), progress: 10 }, // another worker's
            { ...ref(firstC!), progress: 20 }, // a stale generation
            { ...ref(secondC!), progress: { step: 'upload', done: 3, of: 7, note: 'ünï 🚀' } },
            { ...ref(claimedA!), progress: 42.5 },
          ],
        });
        assert.deepEqual(accepted, [c!.id, a!.id], 'the owned ones, in input order');
        const storedA = (await engine.jobGet({ id: a!.id }))!;
        assert.equal(storedA.progress, 42.5);
        assert.equal(storedA.updatedAt.getTime(), clock.now().getTime());
        assert.equal(
          storedA.leaseExpiresAt?.getTime(),
          claimedA!.leaseExpiresAt!.getTime(),
          'the lease is not extended',
        );
        assert.equal(storedA.status, 'processing');
        assert.deepEqual((await engine.jobGet({ id: c!.id }))?.progress, {
          step: 'upload',
          done: 3,
          of: 7,
          note: 'ünï 🚀',
        });
        assert.equal((await engine.jobGet({ id: b!.id }))?.progress, null);

        // A failed attempt keeps how far it got; the next claim starts from nothing.
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(claimedA!), error: 'boom', retryDelayMs: 0 }],
        });
        assert.equal((await engine.jobGet({ id: a!.id }))?.progress, 42.5);
        assert.deepEqual(
          await engine.jobProgress({ workerId: 'w1', jobs: [{ ...ref(claimedA!), progress: 50 }] }),
          [],
          'not processing any more',
        );
        const [again] = await claim(engine, 'w1', { limit: 1 });
        assert.equal(again?.id, a!.id);
        assert.equal(again?.progress, null);
        assert.deepEqual(await engine.jobGet({ id: a!.id }), again);

        // From the lease's expiry instant on, refused like a renewal; and after completion.
        await clock.advance(TTL - 1_000);
        assert.deepEqual(
          await engine.jobProgress({ workerId: 'w1', jobs: [{ ...ref(secondC!), progress: 99 }] }),
          [],
        );
        const storedC = (await engine.jobGet({ id: c!.id }))?.progress as { done: number };
        assert.equal(storedC.done, 3, 'the refused write changed nothing');
        await engine.jobComplete({ workerId: 'w1', jobs: [ref(again!)] });
        assert.deepEqual(
          await engine.jobProgress({ workerId: 'w1', jobs: [{ ...ref(again!), progress: 1 }] }),
          [],
        );
        assert.equal((await engine.jobGet({ id: a!.id }))?.progress, null);
      },
    );

    conformanceCase(
      h,
      'completes only the current claim of the worker, stores the result, and only once',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec());
        const [first] = await claim(engine, 'w1');
        await engine.jobHandBack({ workerId: 'w1', jobs: [ref(first!)] });
        const [claimed] = await claim(engine, 'w1');
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w2', jobs: [{ ...ref(claimed!), result: 'x' }] }),
          [],
          'another worker',
        );
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w1', jobs: [{ ...ref(first!), result: 'x' }] }),
          [],
          'a stale generation',
        );
        await clock.advance(1_000);
        const result = { sent: true, to: ['a@example.com'] };
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w1', jobs: [{ ...ref(claimed!), result }] }),
          [job!.id],
        );
        const done = await engine.jobGet({ id: job!.id });
        assert.equal(done?.status, 'completed');
        assert.deepEqual(done?.result, result);
        assert.equal(done?.finishedAt?.getTime(), clock.now().getTime());
        assert.equal(done?.leaseExpiresAt, null);
        assert.equal(done?.claimedBy, 'w1', 'the completed job remembers who ran it');
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] }),
          [],
          'a second completion is refused',
        );
      },
    );

    conformanceCase(
      h,
      'completes a batch in one call, accepting only the jobs the worker owns',
      async ({ engine }) => {
        await enqueue(engine, spec(), spec(), spec());
        const mine = await claim(engine, 'w1', { limit: 2 });
        const [theirs] = await claim(engine, 'w2');
        const accepted = await engine.jobComplete({
          workerId: 'w1',
          jobs: [...mine, theirs!].map(ref),
        });
        assert.deepEqual(
          [...accepted].sort((a, b) => a - b),
          mine.map((j) => j.id).sort((a, b) => a - b),
        );
        assert.equal((await engine.jobGet({ id: theirs!.id }))?.status, 'processing');
      },
    );

    conformanceCase(
      h,
      'removes completed jobs when asked, only those the worker owns, freeing their partition',
      async ({ engine }) => {
        const [a1, a2, other] = await enqueue(
          engine,
          spec({ partitionKey: 'a', payload: 'a1' }),
          spec({ partitionKey: 'a', payload: 'a2' }),
          spec({ payload: 'other' }),
        );
        const claimed = await claim(engine, 'w1', { limit: 3 });
        assert.deepEqual(
          claimed.map((j) => j.id).sort((x, y) => x - y),
          [a1!.id, other!.id],
          'a2 waits behind its partition head',
        );
        const stale = { ...ref(claimed[0]!), generation: claimed[0]!.generation - 1 };
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w2', jobs: claimed.map(ref), remove: true }),
          [],
          'another worker removes nothing',
        );
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w1', jobs: [stale], remove: true }),
          [],
          'a stale generation removes nothing',
        );
        assert.equal((await engine.jobGet({ id: a1!.id }))?.status, 'processing');
        const accepted = await engine.jobComplete({
          workerId: 'w1',
          jobs: claimed.map(ref),
          remove: true,
        });
        assert.deepEqual(
          [...accepted].sort((x, y) => x - y),
          [a1!.id, other!.id],
        );
        assert.equal(await engine.jobGet({ id: a1!.id }), null);
        assert.equal(await engine.jobGet({ id: other!.id }), null);
        assert.deepEqual(
          (await claim(engine, 'w1')).map((j) => j.id),
          [a2!.id],
          'the next job of the partition runs',
        );
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w1', jobs: claimed.map(ref), remove: true }),
          [],
          'a second completion is refused',
        );
      },
    );

    conformanceCase(
      h,
      'accepts a completion after the lease expired as long as the job was not rescued',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec());
        const [claimed] = await claim(engine, 'w1');
        await clock.advance(TTL + 5_000);
        assert.deepEqual(await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] }), [
          job!.id,
        ]);
      },
    );

    conformanceCase(
      h,
      'refuses a failure from another worker or a stale generation',
      async ({ engine }) => {
        const [job] = await enqueue(engine, spec());
        const [first] = await claim(engine, 'w1');
        await engine.jobHandBack({ workerId: 'w1', jobs: [ref(first!)] });
        const [claimed] = await claim(engine, 'w1');
        const failure = { error: 'boom', retryDelayMs: 0 };
        assert.deepEqual(
          await engine.jobFail({ workerId: 'w2', jobs: [{ ...ref(claimed!), ...failure }] }),
          [],
        );
        assert.deepEqual(
          await engine.jobFail({ workerId: 'w1', jobs: [{ ...ref(first!), ...failure }] }),
          [],
        );
        const after = await engine.jobGet({ id: job!.id });
        assert.equal(after?.status, 'processing');
        assert.equal(after?.lastError, null);
      },
    );

    conformanceCase(
      h,
      'retries a failed job after its delay, then dead-letters it at maxAttempts with its errors',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec({ maxAttempts: 3 }));
        const tokens: number[] = [];
        for (let attempt = 1; attempt <= 2; attempt++) {
          const [claimed] = await claim(engine, 'w1');
          assert.equal(claimed?.attempts, attempt);
          tokens.push(claimed!.generation);
          const [outcome] = await engine.jobFail({
            workerId: 'w1',
            jobs: [{ ...ref(claimed!), error: `failure ${attempt}`, retryDelayMs: 2_000 }],
          });
          assert.deepEqual(outcome, { id: job!.id, outcome: 'retried' });
          const retried = await engine.jobGet({ id: job!.id });
          assert.equal(retried?.status, 'pending');
          assert.equal(retried?.availableAt.getTime(), clock.now().getTime() + 2_000);
          assert.equal(retried?.lastError, `failure ${attempt}`);
          assert.equal(retried?.leaseExpiresAt, null);
          assert.equal(retried?.finishedAt, null);
          await clock.advance(1_999);
          assert.deepEqual(await claim(engine, 'w1'), [], 'still backing off');
          await clock.advance(1);
        }
        const [last] = await claim(engine, 'w1');
        assert.equal(last?.attempts, 3);
        const [outcome] = await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(last!), error: 'failure 3', retryDelayMs: 2_000 }],
        });
        assert.deepEqual(outcome, { id: job!.id, outcome: 'dead' });
        const dead = await engine.jobGet({ id: job!.id });
        assert.equal(dead?.status, 'dead');
        assert.equal(dead?.finishedAt?.getTime(), clock.now().getTime());
        assert.equal(dead?.lastError, 'failure 3');
        assert.deepEqual(
          dead?.errors.map((e) => [e.attempt, e.error]),
          [
            [1, 'failure 1'],
            [2, 'failure 2'],
            [3, 'failure 3'],
          ],
        );
        assert.equal(dead?.errors[2]?.at.getTime(), clock.now().getTime());
        // Each entry names the claim that failed: its worker and its fencing token.
        tokens.push(last!.generation);
        assert.deepEqual(
          dead?.errors.map((e) => [e.worker, e.token]),
          tokens.map((t) => ['w1', t]),
        );
        await clock.advance(10_000);
        assert.deepEqual(await claim(engine, 'w1'), [], 'a dead job is never claimed');
      },
    );

    conformanceCase(
      h,
      'dead-letters a final failure at once, whatever attempts remain',
      async ({ engine }) => {
        const [job] = await enqueue(engine, spec({ maxAttempts: 10 }));
        const [claimed] = await claim(engine, 'w1');
        const [outcome] = await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(claimed!), error: 'bad input', retryDelayMs: 0, final: true }],
        });
        assert.deepEqual(outcome, { id: job!.id, outcome: 'dead' });
        const dead = await engine.jobGet({ id: job!.id });
        assert.equal(dead?.status, 'dead');
        assert.equal(dead?.attempts, 1);
        assert.equal(dead?.lastError, 'bad input');
      },
    );

    conformanceCase(h, 'keeps the newest 20 attempt errors, oldest first', async ({ engine }) => {
      const [job] = await enqueue(engine, spec({ maxAttempts: 30 }));
      for (let attempt = 1; attempt <= 22; attempt++) {
        const [claimed] = await claim(engine, 'w1');
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(claimed!), error: `e${attempt}`, retryDelayMs: 0 }],
        });
      }
      const after = await engine.jobGet({ id: job!.id });
      assert.deepEqual(
        after?.errors.map((e) => e.attempt),
        Array.from({ length: 20 }, (_, i) => i + 3),
      );
      assert.equal(after?.lastError, 'e22');
    });

    conformanceCase(
      h,
      'hands a job back: pending at once, its attempt given back, claimable again at once',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec());
        const [claimed] = await claim(engine, 'w1');
        await clock.advance(1_000);
        assert.deepEqual(await engine.jobHandBack({ workerId: 'w2', jobs: [ref(claimed!)] }), []);
        assert.deepEqual(await engine.jobHandBack({ workerId: 'w1', jobs: [ref(claimed!)] }), [
          job!.id,
        ]);
        const back = await engine.jobGet({ id: job!.id });
        assert.equal(back?.status, 'pending');
        assert.equal(back?.attempts, 0);
        assert.equal(back?.generation, 1, 'the generation is never reused');
        assert.equal(back?.availableAt.getTime(), clock.now().getTime());
        assert.equal(back?.leaseExpiresAt, null);
        assert.deepEqual(
          await engine.jobHandBack({ workerId: 'w1', jobs: [ref(claimed!)] }),
          [],
          'only once',
        );
        const [again] = await claim(engine, 'w2');
        assert.equal(again?.id, job!.id);
        assert.equal(again?.attempts, 1);
        assert.equal(again?.generation, 2);
      },
    );

    // --- operator actions -----------------------------------------------------------------
    conformanceCase(
      h,
      'cancels a pending job, and a processing one whose owner can then neither renew nor complete',
      async ({ engine, clock }) => {
        const [pending, running] = await enqueue(engine, spec({ delayMs: 60_000 }), spec());
        const [claimed] = await claim(engine, 'w1');
        assert.equal(claimed?.id, running!.id);

        await clock.advance(1_000);
        const cancelledPending = await engine.jobCancel({ id: pending!.id });
        assert.equal(cancelledPending?.status, 'cancelled');
        assert.equal(cancelledPending?.finishedAt?.getTime(), clock.now().getTime());
        const cancelledRunning = await engine.jobCancel({ id: running!.id });
        assert.equal(cancelledRunning?.status, 'cancelled');
        assert.equal(cancelledRunning?.leaseExpiresAt, null);

        assert.deepEqual(
          await engine.jobRenewLeases({ workerId: 'w1', jobs: [ref(claimed!)], leaseTtlMs: TTL }),
          [],
        );
        assert.deepEqual(await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] }), []);
        assert.equal((await engine.jobGet({ id: running!.id }))?.status, 'cancelled');
        await clock.advance(60_000);
        assert.deepEqual(await claim(engine, 'w1'), [], 'a cancelled job is never claimed');
      },
    );

    conformanceCase(
      h,
      'leaves a finished job as it is when asked to cancel it, and answers null for an unknown id',
      async ({ engine }) => {
        const [job] = await enqueue(engine, spec());
        const [claimed] = await claim(engine, 'w1');
        await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] });
        const before = await engine.jobGet({ id: job!.id });
        const answer = await engine.jobCancel({ id: job!.id });
        assert.equal(answer?.status, 'completed');
        assert.deepEqual(await engine.jobGet({ id: job!.id }), before);
        assert.equal(await engine.jobCancel({ id: 999_999 }), null);
      },
    );

    conformanceCase(
      h,
      'retries a dead job: pending now with attempts reset, and claimable under a new generation',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec({ maxAttempts: 1 }));
        const [claimed] = await claim(engine, 'w1');
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(claimed!), error: 'boom', retryDelayMs: 0 }],
        });
        assert.equal(await engine.jobRetry({ id: 999_999 }), null, 'unknown');

        await clock.advance(5_000);
        const retried = await engine.jobRetry({ id: job!.id });
        assert.equal(retried?.status, 'pending');
        assert.equal(retried?.attempts, 0);
        assert.equal(retried?.availableAt.getTime(), clock.now().getTime());
        assert.equal(retried?.finishedAt, null);
        assert.equal(await engine.jobRetry({ id: job!.id }), null, 'a pending job is live');

        const [again] = await claim(engine, 'w2');
        assert.equal(again?.id, job!.id);
        assert.equal(again?.generation, 2);
        assert.equal(again?.attempts, 1);
        assert.equal(await engine.jobRetry({ id: job!.id }), null, 'a processing job is live');
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] }),
          [],
          'the first owner is fenced out',
        );
      },
    );

    conformanceCase(h, 'retries completed and cancelled jobs too', async ({ engine }) => {
      const [done, cancelled] = await enqueue(engine, spec(), spec({ delayMs: 60_000 }));
      const [claimed] = await claim(engine, 'w1');
      await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] });
      await engine.jobCancel({ id: cancelled!.id });
      assert.equal((await engine.jobRetry({ id: done!.id }))?.status, 'pending');
      assert.equal((await engine.jobRetry({ id: cancelled!.id }))?.status, 'pending');
    });

    conformanceCase(
      h,
      'refuses to retry a job whose key a live job has taken since',
      async ({ engine }) => {
        const [old] = await enqueue(engine, spec({ key: 'k' }));
        await engine.jobCancel({ id: old!.id });
        const [live] = await enqueue(engine, spec({ key: 'k' }));
        assert.notEqual(live!.id, old!.id);
        await assert.rejects(engine.jobRetry({ id: old!.id }), (e: unknown) =>
          isLeaseholdError(e, 'conflict'),
        );
        assert.equal((await engine.jobGet({ id: old!.id }))?.status, 'cancelled');
      },
    );

    conformanceCase(
      h,
      'deletes a job that is not processing, and never a processing one',
      async ({ engine }) => {
        const [running, waiting] = await enqueue(engine, spec(), spec({ delayMs: 60_000 }));
        await claim(engine, 'w1');
        assert.equal(await engine.jobDelete({ id: running!.id }), false);
        assert.equal((await engine.jobGet({ id: running!.id }))?.status, 'processing');
        assert.equal(await engine.jobDelete({ id: waiting!.id }), true);
        assert.equal(await engine.jobGet({ id: waiting!.id }), null);
        assert.equal(await engine.jobDelete({ id: waiting!.id }), false, 'already gone');
      },
    );

    // --- reads ----------------------------------------------------------------------------
    conformanceCase(
      h,
      'lists jobs newest first, filtered by queue, status and partition, with limit and offset',
      async ({ engine }) => {
        const jobs = await enqueue(
          engine,
          spec({ queue: 'a', partitionKey: 'p' }),
          spec({ queue: 'a' }),
          spec({ queue: 'b', partitionKey: 'p' }),
          spec({ queue: 'a', partitionKey: 'p', delayMs: 60_000 }),
          spec({ queue: 'a' }),
        );
        const ids = jobs.map((j) => j.id);
        const list = async (filter: {
          queue?: string;
          status?: JobStatus;
          partitionKey?: string;
        }) => (await engine.jobList({ limit: 100, offset: 0, ...filter })).map((j) => j.id);

        assert.deepEqual(await list({}), [...ids].reverse());
        assert.deepEqual(await list({ queue: 'a' }), [ids[4], ids[3], ids[1], ids[0]]);
        assert.deepEqual(await list({ partitionKey: 'p' }), [ids[3], ids[2], ids[0]]);
        assert.deepEqual(await list({ queue: 'a', partitionKey: 'p' }), [ids[3], ids[0]]);
        await claim(engine, 'w1', { queues: ['a'], limit: 1 });
        assert.deepEqual(await list({ status: 'processing' }), [ids[0]]);
        assert.deepEqual(await list({ queue: 'a', status: 'pending' }), [ids[4], ids[3], ids[1]]);
        assert.deepEqual(await list({ queue: 'nope' }), []);
        const page = await engine.jobList({ limit: 2, offset: 1 });
        assert.deepEqual(
          page.map((j) => j.id),
          [ids[3], ids[2]],
        );
      },
    );

    conformanceCase(h, 'counts jobs by queue and status', async ({ engine }) => {
      assert.deepEqual(await engine.jobCounts(), []);
      await enqueue(engine, spec({ queue: 'a' }), spec({ queue: 'a' }), spec({ queue: 'b' }));
      const [claimed] = await claim(engine, 'w1', { queues: ['a'], limit: 1 });
      await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] });
      await claim(engine, 'w1', { queues: ['b'] });
      const counts = (await engine.jobCounts())
        .map((c) => `${c.queue}/${c.status}=${c.count}`)
        .sort();
      assert.deepEqual(counts, ['a/completed=1', 'a/pending=1', 'b/processing=1']);
    });

    conformanceCase(
      h,
      'returns copies: mutating a returned job changes nothing stored',
      async ({ engine }) => {
        const [job] = await enqueue(
          engine,
          spec({ payload: { list: [1, 2] }, headers: { h: 'v' } }),
        );
        const mutable = job as unknown as {
          payload: { list: number[] };
          headers: Record<string, string>;
          availableAt: Date;
          status: string;
        };
        mutable.payload.list.push(3);
        mutable.headers.h = 'changed';
        mutable.availableAt.setTime(0);
        mutable.status = 'completed';
        const stored = await engine.jobGet({ id: job!.id });
        assert.deepEqual(stored?.payload, { list: [1, 2] });
        assert.deepEqual(stored?.headers, { h: 'v' });
        assert.notEqual(stored?.availableAt.getTime(), 0);
        assert.equal(stored?.status, 'pending');
      },
    );

    // --- rescue and prune -----------------------------------------------------------------
    conformanceCase(
      h,
      'rescues an expired lease to pending within the backoff, and fences out the old owner',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec({ maxAttempts: 3 }));
        const [claimed] = await claim(engine, 'w1');
        await clock.advance(TTL - 1);
        assert.deepEqual(await engine.jobRescueExpired({ limit: 10, backoff: BACKOFF }), {
          rescued: 0,
          deadLettered: 0,
        });
        await clock.advance(1);
        assert.deepEqual(await claim(engine, 'w2'), [], 'an expired job waits for the rescuer');
        assert.deepEqual(await engine.jobRescueExpired({ limit: 10, backoff: BACKOFF }), {
          rescued: 1,
          deadLettered: 0,
        });
        const rescued = await engine.jobGet({ id: job!.id });
        const now = clock.now().getTime();
        assert.equal(rescued?.status, 'pending');
        assert.equal(rescued?.attempts, 1, 'the lost attempt counts');
        assert.equal(rescued?.leaseExpiresAt, null);
        const availableAt = rescued!.availableAt.getTime();
        assert.ok(
          availableAt >= now && availableAt <= now + backoffCeiling(BACKOFF, 1),
          `available ${availableAt - now} ms from now`,
        );
        assert.deepEqual(
          await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] }),
          [],
          'the old owner cannot complete a rescued job',
        );

        await clock.advance(backoffCeiling(BACKOFF, 1));
        const [again] = await claim(engine, 'w2');
        assert.equal(again?.id, job!.id);
        assert.equal(again?.generation, 2);
        assert.equal(again?.attempts, 2);
        assert.deepEqual(await engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)] }), []);
        assert.deepEqual(await engine.jobComplete({ workerId: 'w2', jobs: [ref(again!)] }), [
          job!.id,
        ]);
      },
    );

    conformanceCase(
      h,
      'dead-letters an expired job that used its last attempt',
      async ({ engine, clock }) => {
        const [job] = await enqueue(engine, spec({ maxAttempts: 1 }));
        await claim(engine, 'w1');
        await clock.advance(TTL);
        assert.deepEqual(await engine.jobRescueExpired({ limit: 10, backoff: BACKOFF }), {
          rescued: 0,
          deadLettered: 1,
        });
        const dead = await engine.jobGet({ id: job!.id });
        assert.equal(dead?.status, 'dead');
        assert.equal(dead?.finishedAt?.getTime(), clock.now().getTime());
        assert.equal(dead?.leaseExpiresAt, null);
      },
    );

    conformanceCase(
      h,
      'rescues at most limit jobs per call, and leaves live leases alone',
      async ({ engine, clock }) => {
        await enqueue(engine, spec(), spec(), spec(), spec());
        await claim(engine, 'w1', { limit: 3 });
        await clock.advance(10_000);
        const [live] = await claim(engine, 'w2');
        await clock.advance(TTL - 10_000);
        assert.deepEqual(await engine.jobRescueExpired({ limit: 2, backoff: BACKOFF }), {
          rescued: 2,
          deadLettered: 0,
        });
        assert.deepEqual(await engine.jobRescueExpired({ limit: 2, backoff: BACKOFF }), {
          rescued: 1,
          deadLettered: 0,
        });
        assert.deepEqual(await engine.jobRescueExpired({ limit: 2, backoff: BACKOFF }), {
          rescued: 0,
          deadLettered: 0,
        });
        assert.equal((await engine.jobGet({ id: live!.id }))?.status, 'processing');
      },
    );

    conformanceCase(
      h,
      'prunes finished jobs older than the retention window, a limited number at a time',
      async ({ engine, clock }) => {
        const [completed, dead, cancelled, pending] = await enqueue(
          engine,
          spec(),
          spec({ maxAttempts: 1 }),
          spec({ delayMs: 600_000 }),
          spec({ delayMs: 600_000 }),
        );
        const claimed = await claim(engine, 'w1', { limit: 2 });
        const claimOf = (job: Job | undefined) => ref(claimed.find((j) => j.id === job?.id)!);
        await engine.jobComplete({ workerId: 'w1', jobs: [claimOf(completed)] });
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...claimOf(dead), error: 'boom', retryDelayMs: 0 }],
        });
        await engine.jobCancel({ id: cancelled!.id });
        const [running] = await enqueue(engine, spec());
        await claim(engine, 'w2');

        await clock.advance(60_000);
        assert.equal(await engine.jobPrune({ olderThanMs: 60_000, limit: 10 }), 0, 'not older');
        await clock.advance(1);
        assert.equal(await engine.jobPrune({ olderThanMs: 60_000, limit: 2 }), 2);
        assert.equal(await engine.jobPrune({ olderThanMs: 60_000, limit: 2 }), 1);
        assert.equal(await engine.jobPrune({ olderThanMs: 60_000, limit: 2 }), 0);
        for (const gone of [completed, dead, cancelled])
          assert.equal(await engine.jobGet({ id: gone!.id }), null);
        assert.equal((await engine.jobGet({ id: pending!.id }))?.status, 'pending');
        assert.equal((await engine.jobGet({ id: running!.id }))?.status, 'processing');
      },
    );

    // --- partitions -----------------------------------------------------------------------
    conformanceCase(
      h,
      'runs one job per partition at a time, in enqueue order whatever the priority',
      async ({ engine }) => {
        const [a1, a2, b1, free, a3] = await enqueue(
          engine,
          spec({ partitionKey: 'a', payload: 'a1' }),
          spec({ partitionKey: 'a', payload: 'a2', priority: 10 }),
          spec({ partitionKey: 'b', payload: 'b1' }),
          spec({ payload: 'free' }),
          spec({ partitionKey: 'a', payload: 'a3', priority: 20 }),
        );
        const first = await claim(engine, 'w1', { limit: 10 });
        assert.deepEqual(ids(first), ids([a1!, b1!, free!]));
        assert.deepEqual(await claim(engine, 'w2', { limit: 10 }), [], 'a is busy, b is busy');

        const a1Claim = first.find((j) => j.id === a1!.id)!;
        await engine.jobComplete({ workerId: 'w1', jobs: [ref(a1Claim)] });
        assert.deepEqual(ids(await claim(engine, 'w2', { limit: 10 })), [a2!.id]);
        assert.deepEqual(await claim(engine, 'w2', { limit: 10 }), []);
        const a2Claim = (await engine.jobGet({ id: a2!.id }))!;
        await engine.jobComplete({ workerId: 'w2', jobs: [ref(a2Claim)] });
        assert.deepEqual(ids(await claim(engine, 'w2', { limit: 10 })), [a3!.id]);
      },
    );

    conformanceCase(
      h,
      'holds a partition back while its oldest job waits out a retry backoff; others flow',
      async ({ engine, clock }) => {
        const [a1, a2, b1, b2] = await enqueue(
          engine,
          spec({ partitionKey: 'a', payload: 'a1' }),
          spec({ partitionKey: 'a', payload: 'a2' }),
          spec({ partitionKey: 'b', payload: 'b1' }),
          spec({ partitionKey: 'b', payload: 'b2' }),
        );
        const first = await claim(engine, 'w1', { limit: 10 });
        assert.deepEqual(ids(first), ids([a1!, b1!]));
        const a1Claim = first.find((j) => j.id === a1!.id)!;
        const b1Claim = first.find((j) => j.id === b1!.id)!;
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(a1Claim), error: 'x', retryDelayMs: 5_000 }],
        });
        await engine.jobComplete({ workerId: 'w1', jobs: [ref(b1Claim)] });

        assert.deepEqual(ids(await claim(engine, 'w1', { limit: 10 })), [b2!.id], 'b flows');
        await clock.advance(4_999);
        assert.deepEqual(await claim(engine, 'w1', { limit: 10 }), [], 'a2 waits behind a1');
        await clock.advance(1);
        const retry = await claim(engine, 'w1', { limit: 10 });
        assert.deepEqual(ids(retry), [a1!.id], 'a1 runs again before a2');
        await engine.jobComplete({ workerId: 'w1', jobs: [ref(retry[0]!)] });
        assert.deepEqual(ids(await claim(engine, 'w1', { limit: 10 })), [a2!.id]);
      },
    );

    conformanceCase(
      h,
      'frees a partition when its oldest job is dead-lettered, cancelled or handed back',
      async ({ engine }) => {
        const [a1, a2, a3] = await enqueue(
          engine,
          spec({ partitionKey: 'a', maxAttempts: 1 }),
          spec({ partitionKey: 'a' }),
          spec({ partitionKey: 'a' }),
        );
        const [first] = await claim(engine, 'w1', { limit: 10 });
        assert.equal(first?.id, a1!.id);
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(first!), error: 'x', retryDelayMs: 0 }],
        });
        const [second] = await claim(engine, 'w1', { limit: 10 });
        assert.equal(second?.id, a2!.id, 'the dead job no longer holds the partition');
        await engine.jobHandBack({ workerId: 'w1', jobs: [ref(second!)] });
        const [secondAgain] = await claim(engine, 'w1', { limit: 10 });
        assert.equal(secondAgain?.id, a2!.id, 'a handed-back head keeps its place');
        await engine.jobCancel({ id: a2!.id });
        assert.deepEqual(ids(await claim(engine, 'w1', { limit: 10 })), [a3!.id]);
      },
    );

    conformanceCase(
      h,
      'never runs two jobs of a partition at once, even when an older job is retried',
      async ({ engine }) => {
        const [a1, a2] = await enqueue(
          engine,
          spec({ partitionKey: 'a', maxAttempts: 1 }),
          spec({ partitionKey: 'a' }),
        );
        const [first] = await claim(engine, 'w1');
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(first!), error: 'x', retryDelayMs: 0 }],
        });
        const [second] = await claim(engine, 'w1');
        assert.equal(second?.id, a2!.id);
        // The operator revives a1: now the oldest unfinished job, while a2 is still running.
        assert.equal((await engine.jobRetry({ id: a1!.id }))?.status, 'pending');
        assert.deepEqual(await claim(engine, 'w2'), [], 'a2 is still processing');
        await engine.jobComplete({ workerId: 'w1', jobs: [ref(second!)] });
        assert.deepEqual(ids(await claim(engine, 'w2')), [a1!.id]);
      },
    );

    // --- notifications --------------------------------------------------------------------
    conformanceCase(
      h,
      'announces an enqueue on topic jobs, once per queue of the batch',
      async ({ engine }) => {
        const woken = new EventQueue<string>();
        await engine.notifyListen({ topic: JOBS_TOPIC, onNotify: woken.push });
        await enqueue(engine, spec({ queue: 'a' }), spec({ queue: 'b' }), spec({ queue: 'a' }));
        await engine.notifySend({ topic: JOBS_TOPIC, payload: 'marker' });
        assert.deepEqual([await woken.next(), await woken.next()].sort(), ['a', 'b']);
        assert.equal(await woken.next(), 'marker', 'no second notification for queue a');
      },
      { requires: ['notifications'] },
    );

    conformanceCase(
      h,
      'announces a hand-back and a retry without delay on topic jobs',
      async ({ engine }) => {
        await enqueue(engine, spec(), spec());
        const [first, second] = await claim(engine, 'w1', { limit: 2 });
        const woken = new EventQueue<string>();
        await engine.notifyListen({ topic: JOBS_TOPIC, onNotify: woken.push });
        await engine.jobHandBack({ workerId: 'w1', jobs: [ref(first!)] });
        await engine.notifySend({ topic: JOBS_TOPIC, payload: 'after hand-back' });
        assert.equal(await woken.next(), 'q');
        assert.equal(await woken.next(), 'after hand-back');
        await engine.jobFail({
          workerId: 'w1',
          jobs: [{ ...ref(second!), error: 'x', retryDelayMs: 0 }],
        });
        await engine.notifySend({ topic: JOBS_TOPIC, payload: 'after fail' });
        assert.equal(await woken.next(), 'q');
        assert.equal(await woken.next(), 'after fail');
      },
      { requires: ['notifications'] },
    );

    // --- the caller's transaction ---------------------------------------------------------
    conformanceCase(
      h,
      'enqueues inside a caller transaction: no job after a rollback, the job after a commit',
      async ({ engine }) => {
        let rolledBack: Job | undefined;
        await inTransaction(engine, 'rollback', async (tx) => {
          [rolledBack] = (await engine.jobEnqueue({ jobs: [spec({ payload: 'no' })], tx })).map(
            (o) => o.job,
          );
          assert.equal(await engine.jobGet({ id: rolledBack!.id }), null, 'not visible yet');
        });
        assert.equal(await engine.jobGet({ id: rolledBack!.id }), null);
        let committed: Job | undefined;
        await inTransaction(engine, 'commit', async (tx) => {
          [committed] = (await engine.jobEnqueue({ jobs: [spec({ payload: 'yes' })], tx })).map(
            (o) => o.job,
          );
        });
        assert.equal((await engine.jobGet({ id: committed!.id }))?.payload, 'yes');
        assert.deepEqual(
          (await engine.jobList({ limit: 10, offset: 0 })).map((j) => j.payload),
          ['yes'],
        );
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );

    conformanceCase(
      h,
      'completes inside a caller transaction: still processing after a rollback, done after a commit',
      async ({ engine }) => {
        const [job] = await enqueue(engine, spec());
        const [claimed] = await claim(engine, 'w1');
        await inTransaction(engine, 'rollback', async (tx) => {
          const accepted = await engine.jobComplete({
            workerId: 'w1',
            jobs: [{ ...ref(claimed!), result: 'no' }],
            tx,
          });
          assert.deepEqual(accepted, [job!.id]);
        });
        assert.equal((await engine.jobGet({ id: job!.id }))?.status, 'processing');
        await inTransaction(engine, 'commit', async (tx) => {
          await engine.jobComplete({
            workerId: 'w1',
            jobs: [{ ...ref(claimed!), result: 'yes' }],
            tx,
          });
        });
        const done = await engine.jobGet({ id: job!.id });
        assert.equal(done?.status, 'completed');
        assert.equal(done?.result, 'yes');
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );

    conformanceCase(
      h,
      'rejects a caller transaction it cannot join instead of pretending to be atomic',
      async ({ engine }) => {
        const tx: CallerTransaction = { query: async () => ({ rows: [] }) };
        await assert.rejects(engine.jobEnqueue({ jobs: [spec()], tx }), (e: unknown) =>
          isLeaseholdError(e, 'unsupported'),
        );
        assert.deepEqual(await engine.jobList({ limit: 10, offset: 0 }), [], 'nothing enqueued');
        await enqueue(engine, spec());
        const [claimed] = await claim(engine, 'w1');
        await assert.rejects(
          engine.jobComplete({ workerId: 'w1', jobs: [ref(claimed!)], tx }),
          (e: unknown) => isLeaseholdError(e, 'unsupported'),
        );
        assert.equal((await engine.jobGet({ id: claimed!.id }))?.status, 'processing');
      },
      { lacks: ['callerTransactions'] },
    );
  });
}

function spec(overrides: Partial<JobSpec> = {}): JobSpec {
  return { queue: 'q', payload: {}, maxAttempts: 3, ...overrides };
}

async function enqueue(engine: Engine, ...specs: JobSpec[]): Promise<Job[]> {
  const outcomes = await engine.jobEnqueue({ jobs: specs });
  return outcomes.map((o) => o.job);
}

function claim(
  engine: Engine,
  workerId: string,
  { queues = ['q'], limit = 10, leaseTtlMs = TTL } = {},
): Promise<Job[]> {
  return engine.jobClaimBatch({ queues, workerId, limit, leaseTtlMs });
}

function ref(job: Job): JobLeaseRef {
  return { id: job.id, generation: job.generation };
}

/** Ids in ascending order: a batch's answer has no order of its own. */
function ids(jobs: readonly Job[]): number[] {
  return jobs.map((j) => j.id).sort((a, b) => a - b);
}

/** Runs `fn` inside a transaction of the caller's own, then commits or rolls it back. */
async function inTransaction(
  engine: Engine,
  outcome: 'commit' | 'rollback',
  fn: (tx: CallerTransaction) => Promise<void>,
): Promise<void> {
  assert.ok(engine instanceof PostgresEngine, 'this case needs a PostgresEngine');
  const client = await engine.pool.connect();
  try {
    await client.query('BEGIN');
    await fn(client);
    await client.query(outcome === 'commit' ? 'COMMIT' : 'ROLLBACK');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
