// The CLI loads only the command a run names (src/cli/main.ts), so help, which names no command,
// must still load and list every one; and a command's own help lists its subcommands.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCliCaptured as run } from '../support/cli-in-process.js';

const COMMANDS = [
  'demo',
  'migrate',
  'serve',
  'worker',
  'generate',
  'leases',
  'jobs',
  'queues',
  'status',
  'bench',
];

describe('leasehold help', () => {
  it('lists every command, in order, when no command is named', async () => {
    for (const args of [['--help'], ['help']]) {
      const answer = await run(args);
      assert.equal(answer.code, 0, `${args.join(' ')}: ${answer.stderr}`);
      const listed = [...answer.stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]);
      assert.deepEqual(
        listed.filter((name) => name !== 'help'),
        COMMANDS,
        args.join(' '),
      );
    }
  });

  it("shows a named command's subcommands", async () => {
    const answer = await run(['jobs', '--help']);
    assert.equal(answer.code, 0, answer.stderr);
    assert.match(answer.stdout, /^Usage: leasehold jobs/m);
    for (const sub of ['list', 'show', 'explain', 'retry', 'cancel', 'enqueue'])
      assert.match(answer.stdout, new RegExp(`^ {2}${sub}\\b`, 'm'), sub);
  });

  it('refuses an unknown command with the one-line shape, suggesting the near one', async () => {
    const answer = await run(['job', 'list']);
    assert.equal(answer.code, 1);
    assert.equal(answer.stdout, '');
    assert.match(answer.stderr, /^leasehold: invalid_argument: unknown command 'job'/);
    assert.match(answer.stderr, /Did you mean jobs\?/);
  });
});
