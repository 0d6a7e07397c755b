// `leasehold jobs retry|cancel|delete --queue <name> [filter]` (issue 27 part 5, decision 0250)
// run the library's operations over many jobs and print how many changed; `leasehold jobs
// retry <id>` still acts on one job. Without an id and without --queue, or with both, or with a
// bad filter, it is one line on stderr, a non-zero exit and nothing changed. On PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { runCliCaptured } from '../support/cli-in-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const run = runCliCaptured;

describe('leasehold jobs retry|cancel|delete --queue', () => {
  it('acts on every matching job of the queue and prints how many; one job by id still works', () =>
    withSchema('cli jobs bulk', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const lh = Leasehold.fromEngine(await schema.engine());
      const emails = lh.queue('emails');
      const [a, b, c] = await emails.enqueueMany([
        { payload: 1, options: { type: 'welcome' } },
        { payload: 2, options: { type: 'welcome', partitionKey: 'p' } },
        { payload: 3, options: { type: 'receipt' } },
      ]);
      const other = await lh.queue('other').enqueue({ n: 1 });
      const status = async (id: number) => (await lh.jobs.get(id))?.status;

      const cancelled = await run([
        'jobs',
        'cancel',
        '--queue',
        'emails',
        '--type',
        'welcome',
        '--batch-size',
        '1',
        ...db,
      ]);
      assert.equal(cancelled.code, 0, cancelled.stderr);
      assert.equal(cancelled.stdout, 'changed: 2\n');

      const retried = await run([
        'jobs',
        'retry',
        '--status',
        'dead,cancelled',
        '--queue',
        'emails',
        ...db,
        '--json',
      ]);
      assert.equal(retried.code, 0, retried.stderr);
      assert.deepEqual(JSON.parse(retried.stdout), { changed: 2 });
      assert.deepEqual(await Promise.all([a, b, c].map((j) => status(j!.id))), [
        'pending',
        'pending',
        'pending',
      ]);

      const one = await run(['jobs', 'cancel', String(c!.id), ...db, '--json']);
      assert.equal(one.code, 0, one.stderr);
      assert.equal((JSON.parse(one.stdout) as { status: string }).status, 'cancelled');
      const oneRetried = await run(['jobs', 'retry', String(c!.id), ...db, '--json']);
      assert.equal(oneRetried.code, 0, oneRetried.stderr);
      assert.equal((JSON.parse(oneRetried.stdout) as { status: string }).status, 'pending');

      const deleted = await run([
        'jobs',
        'delete',
        '--queue',
        'emails',
        '--partition-key',
        'p',
        '--created-since',
        '2000-01-01',
        ...db,
      ]);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.equal(deleted.stdout, 'changed: 1\n');
      assert.equal(await status(b!.id), undefined);
      const oneDeleted = await run(['jobs', 'delete', String(a!.id), ...db]);
      assert.equal(oneDeleted.code, 0, oneDeleted.stderr);
      assert.equal(await status(a!.id), undefined);
      assert.equal(await status(other.id), 'pending', 'other queues untouched');
    }));

  it('refuses a call without id and --queue, with both, or with a bad filter: one line, exit 1, nothing changed', () =>
    withSchema('cli jobs bulk refusals', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const lh = Leasehold.fromEngine(await schema.engine());
      const job = await lh.queue('emails').enqueue({ n: 1 });
      const cases: [string[], RegExp][] = [
        [
          ['jobs', 'retry', '--status', 'dead'],
          /^leasehold: invalid_argument: --queue: is required without a job id/,
        ],
        [['jobs', 'delete'], /^leasehold: invalid_argument: --queue: is required/],
        [
          ['jobs', 'cancel', String(job.id), '--queue', 'emails'],
          /^leasehold: invalid_argument: --queue: applies to every/,
        ],
        [
          ['jobs', 'retry', String(job.id), '--status', 'dead'],
          /^leasehold: invalid_argument: --status: /,
        ],
        [
          ['jobs', 'retry', '--queue', 'emails', '--status', 'pending'],
          /^leasehold: invalid_argument: --status: retry never applies to a pending job/,
        ],
        [
          ['jobs', 'delete', '--queue', 'emails', '--status', 'pending,processing'],
          /--status: delete never applies/,
        ],
        [
          ['jobs', 'cancel', '--queue', 'emails', '--created-since', 'yesterday'],
          /--created-since: must be a Date or an ISO 8601 instant/,
        ],
        [
          ['jobs', 'cancel', '--queue', 'emails', '--batch-size', '0'],
          /--batch-size must be an integer from 1 to 10000/,
        ],
        [['jobs', 'cancel', '--queue', ''], /--queue: must not be empty/],
        [['jobs', 'cancel', '--queue', 'emails', '--colour', 'red'], /unknown option '--colour'/],
      ];
      for (const [args, message] of cases) {
        const answer = await run([...args, ...db]);
        const what = args.join(' ');
        assert.equal(answer.code, 1, `${what}: exit 1`);
        assert.equal(answer.stdout, '', `${what}: nothing on stdout`);
        const lines = answer.stderr.split('\n').filter((l) => l !== '');
        assert.equal(lines.length, 1, `${what}: one line, got:\n${answer.stderr}`);
        assert.match(lines[0]!, message, what);
      }
      assert.equal((await lh.jobs.get(job.id))?.status, 'pending', 'nothing changed');
    }));
});
