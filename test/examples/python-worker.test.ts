// The Python task worker of examples/ (issue 29, part 7) against a real service: it claims the
// tasks with the HTTP API alone, completes them with their fencing tokens, and exits when none
// is ready (`--once`). Skipped, saying so, where python3 is not installed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { within } from '../support/wait.js';

after(closeTestDatabase);

const WORKER = new URL('../../examples/python/task_worker.py', import.meta.url).pathname;
const WRITE_KEY = 'python-writer-0123456789';
const python = spawnSync('python3', ['--version']).status === 0;

describe('the Python task worker example', () => {
  it(
    'completes the ready tasks over HTTP with their tokens, then exits',
    { skip: python ? false : 'python3 is not installed' },
    () =>
      withSchema('python worker', async (schema) => {
        const lh = Leasehold.fromEngine(await schema.engine());
        const server = await startServer({
          lh,
          port: 0,
          apiKeys: [{ name: 'writer', key: WRITE_KEY, scope: 'write' }],
        });
        try {
          const tasks = await lh
            .queue('tasks')
            .enqueueMany([1, 2, 3].map((n) => ({ payload: { sleep_duration_seconds: 0.05, n } })));
          const child = spawn(
            'python3',
            [WORKER, '--url', server.url, '--worker-id', 'py-1', '--lease', '2', '--once'],
            { env: { ...process.env, LEASEHOLD_API_KEY: WRITE_KEY } },
          );
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
          const code = await within(
            new Promise<number | null>((resolve) => child.once('exit', resolve)),
            60_000,
            'the Python worker exiting',
          );
          assert.equal(code, 0, output);
          const events = output
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as { event: string; id?: number; token?: number });
          assert.deepEqual(
            events.map((e) => e.event),
            ['completed', 'completed', 'completed', 'empty'],
          );
          for (const task of tasks) {
            const job = await lh.engine.jobGet({ id: task.id });
            assert.equal(job?.status, 'completed');
            assert.equal(job?.claimedBy, 'py-1');
            assert.deepEqual(job?.result, { slept_seconds: 0.05, by: 'python' });
            const done = events.find((e) => e.id === task.id);
            assert.equal(done?.token, job?.generation, 'completed with the claim token');
          }
        } finally {
          await server.close();
        }
      }),
  );
});
