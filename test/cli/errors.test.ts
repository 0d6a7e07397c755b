// Bad input to the `leasehold` command, through real child processes: one clear line on stderr
// (`leasehold: <code>: <message>`), nothing on stdout, and a non-zero exit. Most cases fail
// before anything connects, so they need no database and never start the embedded server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { runCli } from '../../src/cli/main.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const ROOT = new URL('../..', import.meta.url).pathname;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function leasehold(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `${ROOT}src/cli/main.ts`, ...args],
      // No DATABASE_URL: a case that tried to connect would start an embedded server and show.
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** Runs `fn` over `items`, at most `limit` at a time (child processes are slow to start). */
async function inBatches<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

/** A stream that keeps what is written to it. */
function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

function assertOneLine(run: Run, code: string, message: RegExp, what: string): void {
  assert.equal(run.code, 1, `${what}: exit code (stderr: ${run.stderr})`);
  assert.equal(run.stdout, '', `${what}: nothing on stdout`);
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${run.stderr}`);
  assert.match(lines[0]!, new RegExp(`^leasehold: ${code}: `), what);
  assert.match(lines[0]!, message, what);
  assert.doesNotMatch(run.stderr, /\n\s+at /, `${what}: no stack trace`);
}

describe('leasehold command errors', () => {
  it('refuses bad arguments and options with one line and exit 1, before connecting', async () => {
    const cases: [string[], RegExp][] = [
      [['leases', 'acquire', '--holder', 'a'], /missing required argument 'resource'/],
      [['leases', 'acquire', 'r', '--holder', 'a', '--ttl', 'forever'], /--ttl.*not a duration/],
      [['serve', '--port', 'abc'], /--port must be an integer from 0 to 65535, got "abc"/],
      [['bogus'], /unknown command 'bogus'/],
      [['worker', '--crash-rate', '2'], /--crash-rate: must be a number from 0 to 1/],
      [['jobs', 'retry', 'abc'], /<id> must be an integer/],
    ];
    await inBatches(cases, 3, async ([args, message]) => {
      assertOneLine(await leasehold(args), 'invalid_argument', message, args.join(' '));
    });
  });

  it('refuses the other bad inputs the same way (in process, through runCli)', async () => {
    const cases: [string[], RegExp][] = [
      [['leases', 'acquire', 'r'], /required option '--holder <holder>'/],
      [['leases', 'acquire', 'r\u0001', '--holder', 'a'], /resource/],
      [['leases', 'acquire', 'r', '--holder', 'a', '--ttl', '1ms'], /--ttl: must be at least/],
      [['leases', 'list', '--state', 'bogus'], /--state.*Allowed choices/],
      [['leases', 'renew', 'r', '--holder', 'a', '--token', '0'], /--token must be an integer/],
      [['serve', '--bogus'], /unknown option '--bogus'/],
      [['worker', '--crash-rate', 'abc'], /--crash-rate: must be a number from 0 to 1/],
      [['worker', '--concurrency', '0'], /--concurrency must be an integer from 1/],
      [['worker', '--in-process', '--url', 'http://x'], /cannot be used with option '--url/],
      [['worker', '--once'], /--once: works in process: give --database-url or --in-process/],
      [
        ['worker', '--worker-id', 'a', '--processor', 'b'],
        /--worker-id: give --worker-id or its alias --processor, not both/,
      ],
      [['jobs', 'cancel', '1.5'], /<id> must be an integer/],
      [['jobs', 'list', '--status', 'finished'], /--status.*Allowed choices/],
      [['jobs', 'list', '--queue', ''], /--queue/],
      [['jobs', 'enqueue', 'emails', 'not json'], /payload: must be valid JSON/],
      [['jobs', 'enqueue', 'emails', '[1]'], /payload: must be a JSON object/],
    ];
    for (const [args, message] of cases) {
      const out = capture();
      const err = capture();
      const code = await runCli(args, { out: out.stream, err: err.stream });
      assertOneLine(
        { code, stdout: out.text(), stderr: err.text() },
        'invalid_argument',
        message,
        args.join(' '),
      );
    }
  });

  it('reports an unreachable database as unavailable', async () => {
    const run = await leasehold([
      'leases',
      'list',
      '--database-url',
      'postgres://leasehold@127.0.0.1:1/nothing',
    ]);
    assertOneLine(run, 'unavailable', /unavailable/, 'leases list on a closed port');
  });

  it('answers not_found for an unknown job, and task_done or conflict when the action does not apply', () =>
    withSchema('cli errors jobs', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      await lh.queue('emails').enqueue({ n: 1 });
      const [running] = await lh.engine.jobClaimBatch({
        queues: ['emails'],
        workerId: 'w1',
        limit: 1,
        leaseTtlMs: 30_000,
      });
      await lh.engine.jobComplete({
        workerId: 'w1',
        jobs: [{ id: running!.id, generation: running!.generation }],
      });
      const pending = await lh.queue('emails').enqueue({ n: 2 });
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const cases: [string[], string, RegExp][] = [
        [['jobs', 'retry', '424242', ...db], 'not_found', /job 424242 does not exist/],
        [['jobs', 'cancel', '424242', ...db], 'not_found', /job 424242 does not exist/],
        [['jobs', 'retry', String(pending.id), ...db], 'conflict', /is pending/],
        [['jobs', 'cancel', String(running!.id), ...db], 'task_done', /already completed/],
        [['leases', 'renew', 'r', '--holder', 'a', '--token', '1', ...db], 'lease_lost', /r/],
      ];
      await inBatches(cases, 3, async ([args, code, message]) => {
        assertOneLine(await leasehold(args), code, message, args.slice(0, 3).join(' '));
      });
      assert.equal((await lh.engine.jobGet({ id: pending.id }))?.status, 'pending');
    }));
});
