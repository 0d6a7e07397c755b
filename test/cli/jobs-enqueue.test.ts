// `leasehold jobs enqueue` goes through the library's one way in (lh.queue().enqueue, decision
// 0231): the library's defaults, its dedup, and its validator, whose errors name the command's
// options; bad input writes nothing.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Job } from '../../src/core/types.js';
import { Leasehold } from '../../src/leasehold.js';
import { QUEUE_LIMITS } from '../../src/queue/enqueue-options.js';
import { runCliCaptured } from '../support/cli-in-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const run = runCliCaptured;

describe('leasehold jobs enqueue', () => {
  it("enqueues with the library's defaults and dedup, and prints the job", () =>
    withSchema('cli jobs enqueue', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema, '--json'];
      const first = await run(['jobs', 'enqueue', 'emails', '{"n":1}', '--key', 'k1', ...db]);
      assert.equal(first.code, 0, first.stderr);
      const job = JSON.parse(first.stdout) as Job & { created?: unknown };
      assert.equal(job.queue, 'emails');
      assert.deepEqual(job.payload, { n: 1 });
      assert.equal(job.key, 'k1');
      assert.equal(job.status, 'pending');
      // One default whatever the door (the command gave 5 before 0231).
      assert.equal(job.maxAttempts, QUEUE_LIMITS.maxAttemptsDefault);
      assert.equal(job.maxAttempts, 10);
      assert.equal('created' in job, false, 'the printed job is the job, as before');

      const again = await run(['jobs', 'enqueue', 'emails', '{"n":2}', '--key', 'k1', ...db]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal((JSON.parse(again.stdout) as Job).id, job.id, 'the live job with that key');

      const chosen = await run([
        'jobs',
        'enqueue',
        'emails',
        '{"n":3}',
        '--max-attempts',
        '3',
        '--partition-key',
        'p',
        ...db,
      ]);
      assert.equal(chosen.code, 0, chosen.stderr);
      const third = JSON.parse(chosen.stdout) as Job;
      assert.equal(third.maxAttempts, 3);
      assert.equal(third.partitionKey, 'p');

      const replace = ['jobs', 'enqueue', 'emails', '{"n":4}', '--key', 'k1'];
      const replaced = await run([...replace, '--on-conflict', 'replace', ...db]);
      assert.equal(replaced.code, 0, replaced.stderr);
      const fourth = JSON.parse(replaced.stdout) as Job & { replaced?: unknown };
      assert.deepEqual([fourth.id, fourth.payload], [job.id, { n: 4 }], 'the pending job replaced');
      assert.equal('replaced' in fourth, false);
      const debounced = await run([...replace, '--debounce', '1h', ...db]);
      assert.equal(debounced.code, 0, debounced.stderr);
      const fifth = JSON.parse(debounced.stdout) as Job;
      assert.equal(fifth.id, job.id);
      assert.ok(new Date(fifth.availableAt).getTime() > Date.now() + 3_000_000, 'run an hour on');

      const lh = Leasehold.fromEngine(await schema.engine());
      const stored = await lh.jobs.list({ queue: 'emails' });
      assert.deepEqual(
        stored.map((j) => j.id).sort((a, b) => a - b),
        [job.id, third.id],
      );
    }));

  it("refuses bad input naming the command's option, and writes nothing", () =>
    withSchema('cli jobs enqueue bad', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const cases: [string[], RegExp][] = [
        [['jobs', 'enqueue', 'emails', '{}', '--key', ''], /--key: must not be empty/],
        [['jobs', 'enqueue', 'emails', '{}', '--partition-key', 'a\u0001'], /--partition-key: /],
        [['jobs', 'enqueue', 'emails', '{"a":"b\\u0000"}'], /payload: must not contain NUL/],
        [['jobs', 'enqueue', 'emails', '{"a":"\\ud800"}'], /payload: must not contain lone/],
        [['jobs', 'enqueue', 'emails', '7'], /payload: must be a JSON object/],
        [['jobs', 'enqueue', '', '{}'], /queue: must not be empty/],
        [['jobs', 'enqueue', 'emails', '{}', '--max-attempts', '1001'], /--max-attempts/],
        [['jobs', 'enqueue', 'emails', '{}', '--debounce', '1s'], /--debounce: needs a key/],
        [['jobs', 'enqueue', 'emails', '{}', '--key', 'k', '--debounce', 'soon'], /--debounce: /],
        [
          ['jobs', 'enqueue', 'emails', '{}', '--key', 'k', '--on-conflict', 'merge'],
          /--on-conflict: /,
        ],
      ];
      for (const [args, message] of cases) {
        const answer = await run([...args, ...db]);
        assert.equal(answer.code, 1, args.join(' '));
        assert.equal(answer.stdout, '', args.join(' '));
        assert.match(answer.stderr, /^leasehold: invalid_argument: /, args.join(' '));
        assert.match(answer.stderr, message, args.join(' '));
      }
      const lh = Leasehold.fromEngine(await schema.engine());
      assert.deepEqual(await lh.jobs.list(), []);
    }));
});
