import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { InvalidArgumentError, isLeaseholdError } from '../../../src/core/errors.js';
import type { JobChild } from '../../../src/core/flows.js';
import type { Job, JobStatus } from '../../../src/core/types.js';
import type { CallerTransaction, Engine } from '../../../src/engine/engine.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import type { Leasehold } from '../../../src/leasehold.js';
import type { EnqueuedFlow, FlowDefinition, FlowJob } from '../../../src/queue/job-flows.js';
import { pumpUntil } from '../../support/manual-time.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/**
 * Flows and fan-in on every engine (decision 0255): a parent waits for its children, settled
 * in the transaction that finishes each child, by each child's `parentPolicy`.
 */
export function flowCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: flows`, () => {
    conformanceCase(
      h,
      'a flow three levels deep: each parent waits, runs once after its children and reads their results; removeOnComplete keeps the children',
      async ({ lh, engine, clock }) => {
        const flow = await lh.queue('f-root').enqueueFlow({
          payload: 'root',
          children: [
            {
              queue: 'f-mid',
              payload: 'mid',
              children: [
                { queue: 'f-leaf', payload: 'leaf-1' },
                { queue: 'f-leaf', payload: 'leaf-2' },
              ],
            },
            { queue: 'f-leaf', payload: 'leaf-3' },
          ],
        });
        assert.equal(flow.created, true);
        const [mid, leaf3] = flow.children;
        const [leaf1, leaf2] = mid!.children;
        assert.deepEqual(
          [flow.job, mid!.job, leaf1!.job, leaf2!.job, leaf3!.job].map((j) => [
            j.payload,
            j.status,
            j.parentId,
          ]),
          [
            ['root', 'waiting', null],
            ['mid', 'waiting', flow.job.id],
            ['leaf-1', 'pending', mid!.job.id],
            ['leaf-2', 'pending', mid!.job.id],
            ['leaf-3', 'pending', flow.job.id],
          ],
        );
        assert.deepEqual(
          await engine.jobGet({ id: leaf1!.job.id }),
          leaf1!.job,
          'stored as answered',
        );
        assert.deepEqual(await lh.queue('f-root').explain(flow.job.id), {
          reason: 'children',
          unfinished: 2,
        });
        assert.deepEqual(
          await engine.jobClaimBatch({
            queues: ['f-root', 'f-mid'],
            workerId: 'w',
            limit: 10,
            leaseTtlMs: 30_000,
          }),
          [],
          'a waiting parent is never claimed',
        );
        const counts = await lh.jobs.counts();
        assert.deepEqual(
          counts.find((c) => c.queue === 'f-root'),
          { queue: 'f-root', status: 'waiting', count: 1 },
        );

        const ran: string[] = [];
        const read = new Map<string, JobChild[]>();
        const worker = lh.worker({
          queues: ['f-root', 'f-mid', 'f-leaf'],
          pollInterval: 100,
          flushWindow: 0,
          removeOnComplete: true,
          handler: async (job, ctx) => {
            const name = job.payload as string;
            ran.push(name);
            const children = await ctx.childResults();
            read.set(name, children);
            return { name, from: children.map((c) => c.result) };
          },
        });
        await worker.start();
        try {
          await pumpUntil(clock, 'the root to run', () => read.has('root'));
        } finally {
          await worker.stop();
        }
        assert.equal(ran.filter((n) => n === 'root').length, 1, 'the root ran once');
        assert.equal(ran.at(-1), 'root');
        assert.ok(ran.indexOf('mid') > ran.indexOf('leaf-1'));
        assert.ok(ran.indexOf('mid') > ran.indexOf('leaf-2'));
        assert.deepEqual(read.get('leaf-1'), [], 'a leaf has no children');
        assert.deepEqual(
          read.get('mid')!.map((c) => [c.id, c.queue, c.status, c.result, c.parentPolicy]),
          [
            [leaf1!.job.id, 'f-leaf', 'completed', { name: 'leaf-1', from: [] }, 'fail-parent'],
            [leaf2!.job.id, 'f-leaf', 'completed', { name: 'leaf-2', from: [] }, 'fail-parent'],
          ],
        );
        assert.deepEqual(
          read.get('root')!.map((c) => [c.id, c.status, c.result]),
          [
            [
              mid!.job.id,
              'completed',
              {
                name: 'mid',
                from: [
                  { name: 'leaf-1', from: [] },
                  { name: 'leaf-2', from: [] },
                ],
              },
            ],
            [leaf3!.job.id, 'completed', { name: 'leaf-3', from: [] }],
          ],
        );
        // removeOnComplete: the root (no parent) is gone, its children are kept with results.
        assert.equal(await engine.jobGet({ id: flow.job.id }), null);
        const kept = await lh.jobs.children(mid!.job.id);
        assert.deepEqual(
          [kept.total, kept.children.map((c) => c.status)],
          [2, ['completed', 'completed']],
        );
        assert.equal((await lh.jobs.children(flow.job.id, { limit: 1 })).children.length, 1);
        assert.equal((await lh.jobs.children(flow.job.id, { limit: 1 })).total, 2);
      },
    );

    conformanceCase(
      h,
      'policies: fail-parent dead-letters the parent with the error, late and retried children do not revive it; ignore runs it; cancel-siblings cancels the rest',
      async ({ lh, engine, clock }) => {
        // fail-parent (the default), by a dead child and by a cancelled one.
        const failing = await flowOf(lh, 'p-fail', [{ queue: 'p-fail-a' }, { queue: 'p-fail-b' }]);
        const [a, b] = jobsOf(failing) as [Job, Job];
        await failFinal(engine, 'p-fail-a', 'boom');
        let root = await engine.jobGet({ id: failing.job.id });
        assert.deepEqual([root?.status, root?.lastError], ['dead', `child #${a.id} failed: boom`]);
        assert.equal(root?.errors.at(-1)?.error, `child #${a.id} failed: boom`);
        assert.equal((await engine.jobGet({ id: b.id }))?.status, 'pending', 'siblings run on');
        await completeAll(engine, 'p-fail-b');
        await lh.jobs.retry(a.id);
        await completeAll(engine, 'p-fail-a');
        assert.equal((await engine.jobGet({ id: a.id }))?.status, 'completed');
        root = await engine.jobGet({ id: failing.job.id });
        assert.equal(root?.status, 'dead', 'a late child and a retried one leave the parent dead');
        const cancelling = await flowOf(lh, 'p-cancel', [{ queue: 'p-cancel-a' }]);
        await lh.jobs.cancel(jobsOf(cancelling)[0]!.id);
        root = await engine.jobGet({ id: cancelling.job.id });
        assert.deepEqual(
          [root?.status, root?.lastError],
          ['dead', `child #${jobsOf(cancelling)[0]!.id} was cancelled`],
        );

        // ignore: the failed child counts as done; the parent sees how it ended.
        const ignoring = await flowOf(lh, 'p-ignore', [
          { queue: 'p-ignore-a', parentPolicy: 'ignore' },
          { queue: 'p-ignore-b' },
        ]);
        const [ia, ib] = jobsOf(ignoring) as [Job, Job];
        await failFinal(engine, 'p-ignore-a', 'shrug');
        assert.deepEqual(await lh.queue('p-ignore').explain(ignoring.job.id), {
          reason: 'children',
          unfinished: 1,
        });
        await clock.advance(10);
        await engine.jobPrune({ olderThanMs: 0, limit: 100 });
        assert.ok(await engine.jobGet({ id: ia.id }), 'a child of a waiting parent is not pruned');
        await completeAll(engine, 'p-ignore-b', 'fine');
        assert.equal((await engine.jobGet({ id: ignoring.job.id }))?.status, 'pending');
        const seen = await lh.jobs.children(ignoring.job.id);
        assert.deepEqual(
          seen.children.map((c) => [c.id, c.status, c.result, c.lastError, c.parentPolicy]),
          [
            [ia.id, 'dead', null, 'shrug', 'ignore'],
            [ib.id, 'completed', 'fine', null, 'fail-parent'],
          ],
        );

        // cancel-siblings: pending and waiting descendants cancelled, a running sibling finishes.
        const siblings = await lh.queue('p-sib').enqueueFlow({
          payload: null,
          children: [
            { queue: 'p-sib-a', payload: null, options: { parentPolicy: 'cancel-siblings' } },
            { queue: 'p-sib-b', payload: null },
            {
              queue: 'p-sib-c',
              payload: null,
              children: [{ queue: 'p-sib-c1', payload: null }],
            },
            { queue: 'p-sib-d', payload: null },
          ],
        });
        const [sa, sb, sc, sd] = siblings.children.map((c) => c.job);
        const sc1 = siblings.children[2]!.children[0]!.job;
        const [running] = await claimAll(engine, 'p-sib-d');
        await failFinal(engine, 'p-sib-a', 'stop all');
        assert.deepEqual(await statuses(engine, [siblings.job, sa!, sb!, sc!, sc1, sd!]), [
          'dead',
          'dead',
          'cancelled',
          'cancelled',
          'cancelled',
          'processing',
        ]);
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: running!.id, generation: running!.generation }],
        });
        assert.deepEqual(await statuses(engine, [siblings.job, sd!]), ['dead', 'completed']);
      },
    );

    conformanceCase(
      h,
      'cancelling or deleting a parent cancels its pending and waiting descendants; running ones finish',
      async ({ lh, engine }) => {
        const flow = await lh.queue('c-root').enqueueFlow({
          payload: null,
          children: [
            {
              queue: 'c-mid',
              payload: null,
              children: [{ queue: 'c-leaf', payload: null }],
            },
            { queue: 'c-run', payload: null },
          ],
        });
        const mid = flow.children[0]!.job;
        const leaf = flow.children[0]!.children[0]!.job;
        const run = flow.children[1]!.job;
        const [running] = await claimAll(engine, 'c-run');
        const cancelled = await lh.jobs.cancel(flow.job.id);
        assert.equal(cancelled?.status, 'cancelled');
        assert.deepEqual(await statuses(engine, [mid, leaf, run]), [
          'cancelled',
          'cancelled',
          'processing',
        ]);
        await engine.jobComplete({
          workerId: 'w',
          jobs: [{ id: running!.id, generation: running!.generation, result: 1 }],
        });
        assert.deepEqual(await statuses(engine, [flow.job, run]), ['cancelled', 'completed']);

        const second = await flowOf(lh, 'd-root', [{ queue: 'd-leaf' }, { queue: 'd-leaf' }]);
        assert.equal(await lh.jobs.delete(second.job.id), true);
        assert.deepEqual(await statuses(engine, jobsOf(second)), ['cancelled', 'cancelled']);

        // A bulk cancel of a queue's waiting parents does the same.
        const third = await flowOf(lh, 'b-root', [{ queue: 'b-leaf' }]);
        assert.equal(await lh.queue('b-root').cancelAll(), 1);
        assert.deepEqual(await statuses(engine, [third.job, ...jobsOf(third)]), [
          'cancelled',
          'cancelled',
        ]);
      },
    );

    conformanceCase(
      h,
      'fan-in by key is idempotent while its parent lives; a keyed root met again writes nothing; bad input writes nothing',
      async ({ lh, engine }) => {
        const q = lh.queue('fan-parent');
        const first = await q.enqueueFanIn('batch-7', {
          payload: { report: 7 },
          children: { queue: 'fan-child', payloads: [1, 2, 3] },
        });
        assert.equal(first.created, true);
        assert.deepEqual(
          [first.job.key, first.job.status, first.children.map((c) => c.job.payload)],
          ['batch-7', 'waiting', [1, 2, 3]],
        );
        const again = await q.enqueueFanIn('batch-7', {
          payload: { report: 8 },
          children: { queue: 'fan-child', payloads: [4] },
        });
        assert.deepEqual([again.created, again.job.id, again.children], [false, first.job.id, []]);
        assert.equal(again.job.payload && (again.job.payload as { report: number }).report, 7);
        const plain = await q.enqueue({}, { key: 'batch-7' });
        assert.deepEqual([plain.created, plain.id], [false, first.job.id], 'the key is held');
        assert.equal(await jobCount(engine), 4, 'nothing else was written');

        const bad: [string, () => Promise<unknown>][] = [
          [
            'children[0].options.key',
            () =>
              q.enqueueFlow({
                payload: 1,
                children: [{ queue: 'x', payload: 1, options: { key: 'k' } as never }],
              }),
          ],
          ['children', () => q.enqueueFlow({ payload: 1, children: [] })],
          [
            'children[0].children',
            () =>
              q.enqueueFlow({ payload: 1, children: [{ queue: 'x', payload: 1, children: [] }] }),
          ],
          [
            'children[1].options.bogus',
            () =>
              q.enqueueFlow({
                payload: 1,
                children: [
                  { queue: 'x', payload: 1 },
                  { queue: 'x', payload: 1, options: { bogus: true } as never },
                ],
              }),
          ],
          [
            'children[1]',
            () =>
              q.enqueueFlow({
                payload: 1,
                children: [{ queue: 'x', payload: 1 }, 'nope' as never],
              }),
          ],
          [
            'children[0].options.parentPolicy',
            () =>
              q.enqueueFlow({
                payload: 1,
                children: [{ queue: 'x', payload: 1, options: { parentPolicy: 'maybe' as never } }],
              }),
          ],
          [
            'children[0].children[0].options.maxAttempts',
            () =>
              q.enqueueFlow({
                payload: 1,
                children: [
                  {
                    queue: 'x',
                    payload: 1,
                    children: [{ queue: 'y', payload: 1, options: { maxAttempts: 0 } }],
                  },
                ],
              }),
          ],
          [
            'children[0].queue',
            () => q.enqueueFlow({ payload: 1, children: [{ payload: 1 } as never] }),
          ],
          ['extra', () => q.enqueueFlow({ payload: 1, children: [], extra: 1 } as never)],
          [
            'options.onConflict',
            () =>
              q.enqueueFlow({
                payload: 1,
                options: { onConflict: 'replace' } as never,
                children: [{ queue: 'x', payload: 1 }],
              }),
          ],
          [
            'children.payloads',
            () => q.enqueueFanIn('k', { payload: 1, children: { queue: 'x', payloads: [] } }),
          ],
        ];
        for (const [field, attempt] of bad)
          await assert.rejects(
            attempt(),
            (e: unknown) => e instanceof InvalidArgumentError && e.field === field,
            field,
          );
        assert.equal(await jobCount(engine), 4, 'bad input wrote nothing');
      },
    );

    conformanceCase(
      h,
      "enqueueFlow in the caller's transaction: nothing after a rollback, the whole tree after a commit",
      async ({ lh, engine }) => {
        assert.ok(engine instanceof PostgresEngine);
        const definition: FlowDefinition = {
          payload: 'r',
          children: [
            { queue: 'tx-child', payload: 'c', children: [{ queue: 'tx-leaf', payload: 'l' }] },
          ],
        };
        const inTransaction = async (outcome: 'COMMIT' | 'ROLLBACK'): Promise<EnqueuedFlow> => {
          const client = await engine.pool.connect();
          try {
            await client.query('BEGIN');
            const tx: CallerTransaction = client;
            const flow = await lh.queue('tx-root').enqueueFlow({ ...definition, options: { tx } });
            await client.query(outcome);
            return flow;
          } finally {
            client.release();
          }
        };
        const rolledBack = await inTransaction('ROLLBACK');
        assert.equal(rolledBack.created, true);
        assert.equal(await jobCount(engine), 0, 'nothing after a rollback');
        const committed = await inTransaction('COMMIT');
        assert.deepEqual(
          await statuses(engine, [
            committed.job,
            ...jobsOf(committed),
            committed.children[0]!.children[0]!.job,
          ]),
          ['waiting', 'waiting', 'pending'],
        );
        assert.equal(await jobCount(engine), 3);
        await assert.rejects(
          lh.queue('tx-root').enqueueFlow({
            ...definition,
            options: { tx: {} as CallerTransaction },
          }),
          (e: unknown) => isLeaseholdError(e, 'invalid_argument'),
        );
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );
  });
}

/** A root on `queue` with one leaf child per entry. */
function flowOf(
  lh: Leasehold,
  queue: string,
  children: { queue: string; parentPolicy?: 'ignore' | 'fail-parent' | 'cancel-siblings' }[],
): Promise<EnqueuedFlow> {
  return lh.queue(queue).enqueueFlow({
    payload: null,
    children: children.map((c) => ({
      queue: c.queue,
      payload: null,
      ...(c.parentPolicy ? { options: { parentPolicy: c.parentPolicy } } : {}),
    })),
  });
}

function jobsOf(flow: FlowJob): Job[] {
  return flow.children.map((c) => c.job);
}

function claimAll(engine: Engine, queue: string): Promise<Job[]> {
  return engine.jobClaimBatch({ queues: [queue], workerId: 'w', limit: 10, leaseTtlMs: 30_000 });
}

async function failFinal(engine: Engine, queue: string, error: string): Promise<void> {
  const jobs = await claimAll(engine, queue);
  assert.ok(jobs.length > 0, `a job of ${queue} to fail`);
  await engine.jobFail({
    workerId: 'w',
    jobs: jobs.map((j) => ({
      id: j.id,
      generation: j.generation,
      error,
      retryDelayMs: 0,
      final: true,
    })),
  });
}

async function completeAll(engine: Engine, queue: string, result?: unknown): Promise<void> {
  const jobs = await claimAll(engine, queue);
  assert.ok(jobs.length > 0, `a job of ${queue} to complete`);
  await engine.jobComplete({
    workerId: 'w',
    jobs: jobs.map((j) => ({ id: j.id, generation: j.generation, result })),
  });
}

async function statuses(engine: Engine, jobs: readonly Job[]): Promise<(JobStatus | undefined)[]> {
  return Promise.all(jobs.map(async (j) => (await engine.jobGet({ id: j.id }))?.status));
}

async function jobCount(engine: Engine): Promise<number> {
  return (await engine.jobCounts()).reduce((sum, c) => sum + c.count, 0);
}
