// End to end: `leasehold demo` starts, tasks are created and completed, a task whose worker
// crashed is claimed again after its lease and completed by another worker, and Ctrl-C (SIGINT)
// sent just after a crash still ends with no task left claimed and no process behind. Shorter ttls than the defaults keep it brisk. Its start-up time is
// printed, and bounded only generously: on a machine shared with other test runs it measures
// the machine's load more than the demo (test/support/timing.ts).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startCli } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { waitFor } from '../support/wait.js';
import { isAlive } from '../support/pids.js';

after(closeTestDatabase);

describe('leasehold demo', () => {
  it("starts, completes tasks, recovers a crashed worker's task, and exits cleanly on Ctrl-C", () =>
    withSchema('demo e2e', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const started = performance.now();
      const demo = startCli([
        'demo',
        '--database-url',
        schema.url,
        '--schema',
        schema.schema,
        '--port',
        '0',
        '--lease',
        '1500',
        '--crash-rate',
        '1',
        // Tasks take 1-5 s and two workers stay healthy: generating slower than they finish
        // keeps the queue short, so a rescued task is not stuck behind a growing backlog.
        '--generator-interval',
        '2000',
        '--generator-ttl',
        '2000',
      ]);
      try {
        const [, url] = await demo.waitForLine(
          /service and dashboard: (http:\/\/\S+)\//,
          2 * EVENT_TIMEOUT_MS,
        );
        console.log(`# demo started in ${Math.round(performance.now() - started)} ms`);

        // worker-3 crashes on every task it takes; its task must be completed by someone else.
        // Which worker wins a task is chance (idle workers poll at jittered times), so these
        // waits are long enough for an unlucky draw; a broken rescue still fails them.
        const crashed = await demo.waitForLine(
          /worker-3: crashing on purpose/,
          2 * EVENT_TIMEOUT_MS,
        );
        assert.ok(crashed);
        const recovered = await waitFor(
          'a task completed on a later attempt than its first claim',
          async () => {
            const done = await lh.engine.jobList({
              queue: 'tasks',
              status: 'completed',
              limit: 1000,
              offset: 0,
            });
            return done.find((j) => j.attempts >= 2 && j.claimedBy !== 'worker-3');
          },
          { timeoutMs: 2 * EVENT_TIMEOUT_MS, intervalMs: 200 },
        );
        assert.notEqual(recovered.claimedBy, 'worker-3');
        await waitFor(
          'three tasks completed',
          async () => {
            const processed = await fetch(`${url}/api/tasks/processed`).then(
              (r) => r.json() as Promise<{ tasks: unknown[] }>,
            );
            return processed.tasks.length >= 3;
          },
          { timeoutMs: EVENT_TIMEOUT_MS, intervalMs: 250 },
        );

        // The HTTP task workers are in the workers list, as the dashboard shows it (issue 30).
        const httpWorkers = await waitFor(
          'the HTTP task workers registered',
          async () => {
            const { workers } = await fetch(`${url}/api/workers`).then(
              (r) => r.json() as Promise<{ workers: { name: string; kind: string }[] }>,
            );
            const http = workers.filter((w) => w.kind === 'http').map((w) => w.name);
            return http.length >= 2 ? http : undefined;
          },
          { timeoutMs: EVENT_TIMEOUT_MS, intervalMs: 250 },
        );
        assert.ok(
          httpWorkers.every((name) => /^worker-\d/.test(name)),
          httpWorkers.join(', '),
        );

        const pids = demo.lines.flatMap((l) =>
          [...l.matchAll(/started \(pid (\d+)\)/g)].map((m) => Number(m[1])),
        );
        assert.ok(pids.length >= 5, 'the demo reported its children');
        // Ctrl-C just after worker-3 crashes, while its task is still claimed: a clean stop
        // waits for that claim to run out rather than leave the task claimed.
        const crashes = (): number =>
          demo.lines.filter((l) => /worker-3: crashing on purpose/.test(l)).length;
        const crashesSoFar = crashes();
        await waitFor('worker-3 to crash again', async () => crashes() > crashesSoFar, {
          timeoutMs: 2 * EVENT_TIMEOUT_MS,
          intervalMs: 20,
        });
        demo.kill('SIGINT');
        const exit = await demo.exited();
        assert.equal(
          exit.code,
          0,
          `demo exit: ${JSON.stringify(exit)}\n${demo.lines.slice(-15).join('\n')}`,
        );
        for (const l of demo.lines.filter((l) => /waiting up to|demo stopped/.test(l)))
          console.log(`# ${l.trim()}`);
        assert.ok(
          demo.lines.some((l) => /demo stopped cleanly/.test(l)),
          `the demo's last lines:\n${demo.lines.slice(-15).join('\n')}`,
        );
        assert.deepEqual(pids.filter(isAlive), [], 'no child process outlives the demo');
      } finally {
        demo.kill('SIGKILL');
      }
    }));
});
