// Scale-out on one PostgreSQL: three `leasehold serve` replicas behind a round-robin TCP load
// balancer, eight HTTP task workers talking to the balancer. The generator runs on one replica at
// a time; killing that replica moves it within its bound; a rolling restart of every replica and
// every worker (SIGTERM, one at a time, each replaced) loses no task and lets no task lease
// expire: every task ends completed on its first attempt, except those in flight on the killed
// replica, which may run twice.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { startBalancer } from '../support/tcp-balancer.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const GENERATOR_TTL_MS = 2_000;
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
      let workers = Array.from({ length: 8 }, () => startWorker(balancer.url));
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
          {
            timeoutMs: 20_000,
          },
        );
        const tasks = async () => lh.engine.jobList({ queue: 'tasks', limit: 1000, offset: 0 });
        await waitFor(
          'some tasks done',
          async () => (await tasks()).some((t) => t.status === 'completed'),
          {
            timeoutMs: 30_000,
          },
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
        // A request in flight on the killed replica may have claimed or completed a task whose
        // answer never came back: such a task runs again when its lease expires. Those in flight
        // at the kill are excused below; the rolling restart that follows must excuse none.
        const inFlightAtKill = new Set(
          (await tasks()).filter((t) => t.status === 'processing').map((t) => t.id),
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
        const retried = settled.filter((t) => t.attempts !== 1 && !inFlightAtKill.has(t.id));
        assert.deepEqual(
          retried.map((t) => ({ id: t.id, attempts: t.attempts })),
          [],
          'no task lease expired: every task not in flight at the SIGKILL completed on its first attempt',
        );
        const rerun = settled.filter((t) => t.attempts !== 1).length;
        console.log(
          `# ${settled.length} tasks completed; ${inFlightAtKill.size} in flight at the SIGKILL, ${rerun} of them ran again`,
        );
        const generators = new Set(settled.map((t) => t.headers['generated-by']));
        console.log(
          `# ${settled.length} tasks, all completed on their first attempt; generated by ${[...generators].join(', ')}`,
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
