// `leasehold queues list|pause|resume|configure` and `leasehold jobs explain` (issue 26, decision
// 0242) go through the library (lh.jobs.queues(), lh.queue(name)); bad input is one line on
// stderr, a non-zero exit and nothing changed. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { QueueSettings } from '../../src/core/types.js';
import { Leasehold } from '../../src/leasehold.js';
import type { QueueOverview } from '../../src/queue/job-manager.js';
import { runCliCaptured } from '../support/cli-in-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const run = runCliCaptured;

const DEFAULTS = {
  paused: false,
  concurrency: null,
  perKeyConcurrency: 1,
  rate: null,
  fairness: 'oldest',
};

describe('leasehold queues', () => {
  it('lists, pauses, resumes and configures queues, as text and as JSON', () =>
    withSchema('cli queues', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const lh = Leasehold.fromEngine(await schema.engine());
      await lh.queue('emails').enqueue({ n: 1 });
      await lh.queue('emails').enqueue({ n: 2 });

      const paused = await run(['queues', 'pause', 'emails', ...db, '--json']);
      assert.equal(paused.code, 0, paused.stderr);
      assert.deepEqual(JSON.parse(paused.stdout), { queue: 'emails', ...DEFAULTS, paused: true });
      const claim = () =>
        lh.engine.jobClaimBatch({
          queues: ['emails'],
          workerId: 'w',
          limit: 1,
          leaseTtlMs: 30_000,
        });
      assert.deepEqual(await claim(), [], 'paused: nothing is claimed');

      const configured = await run([
        'queues',
        'configure',
        'emails',
        '--concurrency',
        '5',
        '--per-key-concurrency',
        'none',
        '--rate',
        '100/1s',
        ...db,
        '--json',
      ]);
      assert.equal(configured.code, 0, configured.stderr);
      assert.deepEqual(JSON.parse(configured.stdout) as QueueSettings, {
        queue: 'emails',
        ...DEFAULTS,
        paused: true,
        concurrency: 5,
        perKeyConcurrency: null,
        rate: { limit: 100, per: 1000 },
      });

      const text = await run(['queues', 'list', ...db]);
      assert.equal(text.code, 0, text.stderr);
      const [header, line] = text.stdout.trimEnd().split('\n');
      assert.match(
        header!,
        /^queue\s+paused\s+concurrency\s+perKeyConcurrency\s+rate\s+waiting\s+pending/,
      );
      assert.match(line!, /^emails\s+true\s+5\s+-\s+100\/1s\s+0\s+2\s+0\s+0\s+0\s+0$/);

      const resumed = await run(['queues', 'resume', 'emails', ...db]);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stdout, /^paused: false$/m);
      assert.match(resumed.stdout, /^rate: 100\/1s$/m);
      const [job] = await claim();
      assert.ok(job, 'resumed: a job is claimed');

      const removed = await run([
        'queues',
        'configure',
        'emails',
        '--rate',
        'none',
        '--concurrency',
        'none',
        ...db,
      ]);
      assert.equal(removed.code, 0, removed.stderr);
      const listed = await run(['queues', 'list', ...db, '--json']);
      assert.deepEqual(JSON.parse(listed.stdout) as QueueOverview[], [
        {
          queue: 'emails',
          ...DEFAULTS,
          perKeyConcurrency: null,
          counts: { waiting: 0, pending: 1, processing: 1, completed: 0, dead: 0, cancelled: 0 },
        },
      ]);
    }));

  it("refuses bad input with one line naming the command's option, and changes nothing", () =>
    withSchema('cli queues bad', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const lh = Leasehold.fromEngine(await schema.engine());
      await lh.queue('emails').configure({ concurrency: 4 });
      const before = await lh.engine.queueSettingsList();
      const cases: [string[], RegExp][] = [
        [['queues', 'configure', 'emails'], /invalid_argument: configure: give at least one/],
        [['queues', 'configure', 'emails', '--concurrency', '0'], /--concurrency: must be/],
        [['queues', 'configure', 'emails', '--concurrency', 'lots'], /--concurrency must be/],
        [
          ['queues', 'configure', 'emails', '--concurrency', '10001'],
          /--concurrency: must be at most/,
        ],
        [['queues', 'configure', 'emails', '--per-key-concurrency', '-1'], /--per-key-concurrency/],
        [['queues', 'configure', 'emails', '--rate', '100'], /--rate must be LIMIT\/PER/],
        [['queues', 'configure', 'emails', '--rate', '0/1s'], /--rate: limit must be/],
        [
          ['queues', 'configure', 'emails', '--rate', '5/soon'],
          /--rate: per "soon" is not a duration/,
        ],
        [['queues', 'configure', 'emails', '--rate', '5/1ms'], /--rate: per must be at least/],
        [['queues', 'configure', 'emails', '--fairness', 'newest'], /--fairness: /],
        [['queues', 'configure', '', '--concurrency', '2'], /<queue>: must not be empty/],
        [['queues', 'pause', ''], /<queue>: must not be empty/],
        [['queues', 'pause'], /missing required argument/],
        [['jobs', 'explain', 'abc'], /<id> must be an integer/],
      ];
      for (const [args, message] of cases) {
        const answer = await run([...args, ...db]);
        const what = args.join(' ');
        assert.equal(answer.code, 1, what);
        assert.equal(answer.stdout, '', what);
        assert.match(answer.stderr, /^leasehold: (invalid_argument|unsupported): /, what);
        assert.match(answer.stderr, message, what);
        assert.equal(answer.stderr.trimEnd().split('\n').length, 1, `one line: ${what}`);
      }
      assert.deepEqual(await lh.engine.queueSettingsList(), before, 'nothing changed');
    }));
});

describe('leasehold jobs explain', () => {
  it('prints why a job waits; not_found for an unknown job', () =>
    withSchema('cli jobs explain', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const lh = Leasehold.fromEngine(await schema.engine());
      const job = await lh.queue('emails').enqueue({ n: 1 });
      await lh.queue('emails').pause();
      const json = await run(['jobs', 'explain', String(job.id), ...db, '--json']);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), { reason: 'paused' });

      const later = await lh.queue('reports').enqueue({ n: 1 }, { delay: '1h' });
      const text = await run(['jobs', 'explain', String(later.id), ...db]);
      assert.equal(text.code, 0, text.stderr);
      assert.equal(text.stdout, `reason: scheduled\nuntil: ${later.availableAt.toISOString()}\n`);

      const unknown = await run(['jobs', 'explain', '424242', ...db]);
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stdout, '');
      assert.match(unknown.stderr, /^leasehold: not_found: job 424242 does not exist\n$/);
    }));
});

describe('leasehold jobs show', () => {
  it("prints a job with its recorded steps and its flow's children; not_found for an unknown job", () =>
    withSchema('cli jobs show', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const lh = Leasehold.fromEngine(await schema.engine());
      const flow = await lh.queue('reports').enqueueFlow({
        payload: { month: 11 },
        children: [
          { queue: 'pages', payload: { page: 1 } },
          { queue: 'pages', payload: { page: 2 } },
        ],
      });
      const [first] = flow.children;
      const worker = lh.worker({
        queues: 'pages',
        handler: async (job, ctx) => {
          await ctx.step('render', async () => ({ page: (job.payload as { page: number }).page }));
        },
      });
      const done = worker.runUntilEmpty();
      assert.equal((await done).completed, 2);

      const root = await run(['jobs', 'show', String(flow.job.id), ...db, '--json']);
      assert.equal(root.code, 0, root.stderr);
      const shown = JSON.parse(root.stdout) as Record<string, unknown>;
      assert.equal(shown['status'], 'pending', 'its children done, the parent is ready');
      assert.deepEqual(shown['children'], [
        { id: first!.job.id, queue: 'pages', status: 'completed' },
        { id: flow.children[1]!.job.id, queue: 'pages', status: 'completed' },
      ]);
      assert.equal(shown['childCount'], 2);

      const child = await run(['jobs', 'show', String(first!.job.id), ...db]);
      assert.equal(child.code, 0, child.stderr);
      assert.match(child.stdout, new RegExp(`^parentId: ${flow.job.id}$`, 'm'));
      assert.match(
        child.stdout,
        /^steps: \[\{"name":"render","value":\{"page":1\},"generation":1\}\]$/m,
      );

      const unknown = await run(['jobs', 'show', '424242', ...db]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /^leasehold: not_found: job 424242 does not exist\n$/);
    }));
});
