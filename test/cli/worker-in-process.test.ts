// `leasehold worker --database-url`: the task worker in process on PostgreSQL, as a real child
// process. It completes tasks enqueued with the library, drains on SIGTERM (the task in hand is
// handed back, the worker row ends `stopped`, the exit code is 0), and a worker that crashes
// mid-task loses the task to another worker once its claim expires.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema, type SchemaContext } from '../support/database.js';
import { waitFor, within } from '../support/wait.js';

after(closeTestDatabase);

function inProcessWorker(
  schema: SchemaContext,
  workerId: string,
  extra: string[] = [],
  idOption: '--worker-id' | '--processor' = '--worker-id',
): CliProcess {
  return startCli([
    'worker',
    '--database-url',
    schema.url,
    '--schema',
    schema.schema,
    idOption,
    workerId,
    '--poll',
    '100',
    ...extra,
  ]);
}

describe('leasehold worker in process', () => {
  it('completes tasks enqueued with the library, and on SIGTERM hands back the task in hand, marks its row stopped and exits 0', () =>
    withSchema('cli worker in process', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const tasks = lh.queue('tasks');
      const quick = await Promise.all(
        [1, 2, 3].map((n) => tasks.enqueue({ sleep_duration_seconds: 0.05, n })),
      );
      const worker = inProcessWorker(schema, 'cli-worker-1', [
        '--concurrency',
        '2',
        '--drain-timeout',
        '100',
      ]);
      try {
        await worker.waitForLine(/leasehold worker cli-worker-1 in process/);
        const completed = () =>
          lh.engine.jobList({ queue: 'tasks', status: 'completed', limit: 100, offset: 0 });
        await waitFor('the three tasks completed', async () => (await completed()).length === 3, {
          timeoutMs: 20_000,
        });
        for (const job of await completed()) {
          assert.ok(quick.some((q) => q.id === job.id));
          assert.equal(job.claimedBy, 'cli-worker-1');
          assert.deepEqual(job.result, { slept_seconds: 0.05 });
        }
        const [row] = await lh.engine.workerList({ limit: 10 });
        assert.equal(row?.id, 'cli-worker-1');
        assert.equal(row?.status, 'alive');
        assert.equal(row?.concurrency, 2);
        assert.deepEqual(row?.queues, ['tasks']);

        // A long task, claimed while the worker is idle, is in hand when SIGTERM arrives.
        const long = await tasks.enqueue({ sleep_duration_seconds: 600 });
        await waitFor(
          'the long task claimed',
          async () => (await lh.engine.jobGet({ id: long.id }))?.status === 'processing',
          { timeoutMs: 20_000 },
        );
        worker.kill('SIGTERM');
        const exit = await within(worker.exited(), 20_000, 'the worker exiting');
        assert.deepEqual(exit, { code: 0, signal: null }, worker.lines.slice(-10).join('\n'));

        const handedBack = await lh.engine.jobGet({ id: long.id });
        assert.equal(handedBack?.status, 'pending', 'the task in hand went back to the queue');
        assert.equal(handedBack?.attempts, 0, 'with its attempt given back');
        const [stopped] = await lh.engine.workerList({ limit: 10 });
        assert.equal(stopped?.status, 'stopped');
        assert.equal(stopped?.inFlight, 0);
      } finally {
        worker.kill('SIGKILL');
      }
    }));

  it('loses the task of a worker that crashed mid-task to another worker once the claim expires', () =>
    withSchema('cli worker crash', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const task = await lh.queue('tasks').enqueue({ sleep_duration_seconds: 1 });
      // Named through --processor, the former name of --worker-id (kept as its alias).
      const crashy = inProcessWorker(
        schema,
        'crashy',
        ['--crash-rate', '1', '--lease', '1000'],
        '--processor',
      );
      let steady: CliProcess | undefined;
      try {
        const exit = await within(crashy.exited(), 20_000, 'the crashing worker exiting');
        assert.equal(exit.code, 3, 'it died on purpose');
        const orphan = await lh.engine.jobGet({ id: task.id });
        assert.equal(orphan?.status, 'processing');
        assert.equal(orphan?.claimedBy, 'crashy');

        steady = inProcessWorker(schema, 'steady', ['--lease', '2000']);
        await waitFor(
          'the task completed by the other worker',
          async () => (await lh.engine.jobGet({ id: task.id }))?.status === 'completed',
          { timeoutMs: 30_000 },
        );
        const done = await lh.engine.jobGet({ id: task.id });
        assert.equal(done?.claimedBy, 'steady');
        assert.equal(done?.generation, 2, 'under a new claim, with a new token');
        steady.kill('SIGTERM');
        assert.equal((await within(steady.exited(), 20_000, 'the worker exiting')).code, 0);
      } finally {
        crashy.kill('SIGKILL');
        steady?.kill('SIGKILL');
      }
    }));

  it('with --once runs the tasks that are ready, leaves a scheduled one, prints a summary and exits 0', () =>
    withSchema('cli worker once', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const tasks = lh.queue('tasks');
      const ready = await tasks.enqueueMany(
        [1, 2, 3].map((n) => ({ payload: { sleep_duration_seconds: 0.01, n } })),
      );
      const later = await tasks.enqueue({ sleep_duration_seconds: 0.01 }, { delay: '1h' });
      const worker = inProcessWorker(schema, 'cli-once', ['--once', '--concurrency', '2']);
      const exit = await within(worker.exited(), 60_000, 'the --once worker exiting');
      assert.deepEqual(exit, { code: 0, signal: null }, worker.lines.slice(-10).join('\n'));
      assert.ok(
        worker.lines.some((l) =>
          /leasehold worker cli-once: 3 completed, 0 retried, 0 dead, 0 lost, 0 handed back \(nothing left ready\)/.test(
            l,
          ),
        ),
        worker.lines.join('\n'),
      );
      for (const job of ready)
        assert.equal((await lh.engine.jobGet({ id: job.id }))?.status, 'completed');
      assert.equal((await lh.engine.jobGet({ id: later.id }))?.status, 'pending');
      const [row] = await lh.engine.workerList({ limit: 10 });
      assert.equal(row?.status, 'stopped', 'the worker row ends stopped');
    }));
});
