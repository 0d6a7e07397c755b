// Scale-out on one PostgreSQL: three `leasehold serve` replicas behind a round-robin TCP load
// balancer, eight HTTP task workers talking to the balancer. The generator runs on one replica at
// a time; killing that replica moves it within its bound; a rolling restart of every replica and
// every worker (SIGTERM, one at a time, each replaced) loses no task and lets no task lease
// expire.
//
// The guarantee checked is the queue's, at-least-once: every task completes. A task may run
// again only when a request about it could have been lost with the killed replica (its answer
// never came back, so its lease had to expire first); it is not an error, it is counted and
// printed. Such tasks are among those not yet completed when the replica was killed, at most one
// per worker (each works on one task at a time), and run at most twice. The graceful rolling
// restart must cause no re-run at all: every other task completes on its first attempt.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { startBalancer } from '../support/tcp-balancer.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const GENERATOR_TTL_MS = 2_000;
const WORKERS = 8;
const GENERATOR_INTERVAL_MS = 400;

interface Replica {
  id: string;
  process: CliProcess;
  port: number;
}

interface GeneratorStatus {
  state: string;
  runningOn: string | null;
  token: number | null;
}

describe('many replicas and workers on one database', () => {
  it('runs the generator once, fails over, and survives a rolling restart without losing or expiring a task', () =>
    withSchema('multi replica', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      let serial = 0;
      const startReplica = async (): Promise<Replica> => {
        const id = `replica-${++serial}`;
        const proc = startCli([
          'serve',
          '--database-url',
          schema.url,
          '--schema',
          schema.schema,
          '--port',
          '0',
          '--instance-id',
          id,
          '--generator-interval',
          String(GENERATOR_INTERVAL_MS),
          '--generator-ttl',
          String(GENERATOR_TTL_MS),
        ]);
        const [, url] = await proc.waitForLine(/listening on (http:\/\/\S+)/, 60_000);
        return { id, process: proc, port: Number(new URL(url!).port) };
      };
      let workerSerial = 0;
      const startWorker = (url: string): CliProcess =>
        startCli([
          'worker',
          '--url',
          url,
          '--processor',
          `worker-${++workerSerial}`,
          '--lease',
          '5000',
          '--poll',
          '200',
        ]);

      let replicas: Replica[] = await Promise.all([startReplica(), startReplica(), startReplica()]);
      const balancer = await startBalancer(replicas.map((r) => r.port));
      let workers = Array.from({ length: WORKERS }, () => startWorker(balancer.url));
      // A keep-alive connection to a replica that has just gone fails once, as it would behind
      // any balancer: the client retries on a fresh connection.
      const request = async (path: string, init?: RequestInit): Promise<Response> => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await fetch(`${balancer.url}${path}`, init);
          } catch (error) {
            if (attempt >= 3) throw error;
          }
        }
      };
      const status = async (): Promise<GeneratorStatus> =>
        (await request('/api/generator')).json() as Promise<GeneratorStatus>;
      try {
        await request('/api/generator/start', { method: 'POST' });
        const first = await waitFor(
          'a generating replica',
          async () => (await status()).runningOn,
          // Liveness, not a bound: eleven processes start at once on a loaded machine.
          { timeoutMs: 120_000 },
        );
        const tasks = async () => lh.engine.jobList({ queue: 'tasks', limit: 1000, offset: 0 });
        await waitFor(
          'some tasks done',
          async () => (await tasks()).some((t) => t.status === 'completed'),
          { timeoutMs: 120_000 },
        );
        const before = await tasks();
        assert.deepEqual(
          [...new Set(before.map((t) => t.headers['generated-by']))],
          [first],
          'one replica generated',
        );

        // Kill the generating replica: another takes over within ttl + interval (+ slack).
        const victim = replicas.find((r) => r.id === first)!;
        const tokenBefore = (await status()).token!;
        replicas = replicas.filter((r) => r !== victim);
        balancer.setBackends(replicas.map((r) => r.port));
        const killedAt = Date.now();
        victim.process.kill('SIGKILL');
        // A request in flight on the killed replica may have claimed a task, or failed to
        // complete one, without its answer coming back: such a task runs again when its lease
        // expires. Only a task not completed at the kill can be one (a claim the dead replica sent
        // may still commit just after it, so pending tasks count too); the rolling restart that
        // follows must cause no re-run.
        const unfinishedAtKill = new Set(
          (await tasks()).filter((t) => t.status !== 'completed').map((t) => t.id),
        );
        const next = await waitFor(
          'a new generating replica',
          async () => {
            const s = await status();
            return s.runningOn && s.runningOn !== first ? s : null;
          },
          { timeoutMs: 20_000, intervalMs: 50 },
        );
        const takeoverMs = Date.now() - killedAt;
        assert.ok(next.token! > tokenBefore);
        assert.ok(
          takeoverMs <= GENERATOR_TTL_MS + GENERATOR_INTERVAL_MS + 2_000,
          `generator moved after ${takeoverMs} ms`,
        );
        console.log(`# generator failover after SIGKILL of its replica: ${takeoverMs} ms`);
        replicas.push(await startReplica());
        balancer.setBackends(replicas.map((r) => r.port));

        // Rolling restart of the replicas: out of the balancer, SIGTERM, replaced.
        for (const old of [...replicas]) {
          const fresh = await startReplica();
          replicas = [...replicas.filter((r) => r !== old), fresh];
          balancer.setBackends(replicas.map((r) => r.port));
          old.process.kill('SIGTERM');
          assert.equal((await old.process.exited()).code, 0, `${old.id} shut down cleanly`);
        }
        // Rolling restart of the workers: SIGTERM hands the task in hand back; replaced.
        for (const old of [...workers]) {
          const fresh = startWorker(balancer.url);
          workers = [...workers.filter((w) => w !== old), fresh];
          old.kill('SIGTERM');
          assert.equal((await old.exited()).code, 0, 'worker drained and exited cleanly');
        }

        await request('/api/generator/stop', { method: 'POST' });
        await waitFor('the generator stopped', async () => (await status()).runningOn === null, {
          timeoutMs: 10_000,
        });
        const settled = await waitFor(
          'every task completed',
          async () => {
            const all = await tasks();
            return all.every((t) => t.status === 'completed') ? all : null;
          },
          { timeoutMs: 90_000, intervalMs: 500 },
        );
        assert.ok(settled.length >= 10, `${settled.length} tasks`);
        const rerun = settled.filter((t) => t.attempts !== 1);
        const generators = new Set(settled.map((t) => t.headers['generated-by']));
        // Print the truth first, whatever the assertions below decide.
        console.log(
          `# ${settled.length} tasks completed, generated by ${[...generators].join(', ')}: ` +
            `${settled.length - rerun.length} on their first attempt, ${rerun.length} ran more than once ` +
            `(${unfinishedAtKill.size} were not finished when their replica was SIGKILLed; ` +
            `re-runs after that failover are allowed: the queue is at-least-once)`,
        );
        for (const t of rerun)
          console.log(
            `# task ${t.id} ran ${t.attempts} times${unfinishedAtKill.has(t.id) ? ' (unfinished at the SIGKILL)' : ''}`,
          );
        assert.deepEqual(
          rerun
            .filter((t) => !unfinishedAtKill.has(t.id))
            .map((t) => ({ id: t.id, attempts: t.attempts })),
          [],
          'the graceful rolling restart caused no re-run: every task not unfinished at the SIGKILL completed on its first attempt',
        );
        assert.ok(
          rerun.length <= WORKERS,
          `${rerun.length} tasks ran again; the killed replica can have lost at most one request per worker (${WORKERS})`,
        );
        assert.deepEqual(
          rerun.filter((t) => t.attempts > 2).map((t) => ({ id: t.id, attempts: t.attempts })),
          [],
          'a task affected by the SIGKILL ran at most once more',
        );
      } catch (error) {
        // What the fleet said helps more than a timeout: the last lines of each process.
        for (const w of workers.slice(0, 2))
          console.log(`# worker: ${w.lines.slice(-5).join(' | ')}`);
        for (const r of replicas)
          console.log(`# ${r.id}: ${r.process.lines.slice(-5).join(' | ')}`);
        throw error;
      } finally {
        for (const r of replicas) r.process.kill('SIGKILL');
        for (const w of workers) w.kill('SIGKILL');
        await balancer.close();
      }
    }));
});
