// The queue under process faults on PostgreSQL: workers SIGKILLed mid-job, a worker frozen
// (SIGSTOP) past its lease, and a worker drained by SIGTERM. Each worker process writes its
// job's business effect in the same transaction as the completion, so the `effects` table
// shows exactly which completions the database accepted.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Job } from '../../src/core/types.js';
import { Leasehold } from '../../src/leasehold.js';
import { startScript, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema, type SchemaContext } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/queue-worker.ts', import.meta.url).pathname;

interface Effect {
  job_id: string;
  generation: string;
  worker: string;
}

async function setUp(ctx: SchemaContext): Promise<{ lh: Leasehold; effects(): Promise<Effect[]> }> {
  const engine = await ctx.engine({ poolSize: 6 });
  await engine.pool.query(
    `CREATE TABLE "${ctx.schema}".effects (job_id bigint NOT NULL, generation bigint NOT NULL,
       worker text NOT NULL, partition_key text, started_at timestamptz, finished_at timestamptz)`,
  );
  return {
    lh: Leasehold.fromEngine(engine),
    effects: async () =>
      (await engine.pool.query<Effect>(`SELECT * FROM "${ctx.schema}".effects`)).rows,
  };
}

function startWorker(ctx: SchemaContext, env: Record<string, string>): CliProcess {
  return startScript(FIXTURE, [], { DATABASE_URL: ctx.url, SCHEMA: ctx.schema, ...env });
}

function events(proc: CliProcess, name: string): Record<string, unknown>[] {
  return proc.lines
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e['event'] === name);
}

async function allJobs(lh: Leasehold, queue: string): Promise<Job[]> {
  return lh.engine.jobList({ queue, limit: 1000, offset: 0 });
}

describe('queue under process faults', () => {
  it('loses no job when workers are SIGKILLed mid-job, and accepts no superseded completion', async () => {
    await withSchema('queue crash', async (ctx) => {
      const { lh, effects } = await setUp(ctx);
      const queued = await lh
        .queue('work')
        .enqueueMany(
          Array.from({ length: 200 }, (_, i) => ({ payload: { sleepMs: 20 + (i % 5) * 10 } })),
        );
      const maintainer = lh.maintainer({ interval: 200, workerSilence: 2_000 });
      maintainer.start();
      const env = { QUEUE: 'work', CONCURRENCY: '4', LEASE_TTL_MS: '1500' };
      const workers = Array.from({ length: 4 }, (_, i) =>
        startWorker(ctx, { ...env, WORKER_ID: `crash-${i}` }),
      );
      try {
        await Promise.all(workers.map((w) => w.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS)));
        // Kill two workers while they are in the middle of jobs.
        await waitFor('some progress', async () => (await effects()).length >= 30, {
          timeoutMs: EVENT_TIMEOUT_MS,
        });
        for (const victim of workers.slice(0, 2)) {
          await victim.waitForLine(/"event":"started"/, EVENT_TIMEOUT_MS);
          victim.kill('SIGKILL');
        }
        const killedStarted = workers
          .slice(0, 2)
          .flatMap((w) => events(w, 'started').map((e) => e['id']));
        await waitFor(
          'every job settled',
          async () =>
            (await allJobs(lh, 'work')).every(
              (j) => j.status === 'completed' || j.status === 'dead',
            ),
          { timeoutMs: 2 * EVENT_TIMEOUT_MS, intervalMs: 100 },
        );
        const jobs = await allJobs(lh, 'work');
        assert.equal(jobs.length, queued.length);
        assert.ok(
          jobs.every((j) => j.status === 'completed'),
          'no job needed the dead letter',
        );
        const done = await effects();
        // Exactly one accepted effect per job, from the generation that completed it.
        assert.equal(done.length, queued.length, 'one effect per job, none lost, none doubled');
        const byJob = new Map(done.map((e) => [Number(e.job_id), e]));
        for (const job of jobs) {
          assert.equal(Number(byJob.get(job.id)?.generation), job.generation, `job ${job.id}`);
        }
        // A job a killed worker started and did not complete was finished by another worker
        // under a newer generation. (Its own completion may have committed just before the kill.)
        const killed = new Set(['crash-0', 'crash-1']);
        let interrupted = 0;
        for (const id of killedStarted) {
          const effect = byJob.get(id as number)!;
          if (killed.has(effect.worker)) continue;
          interrupted++;
          assert.ok(Number(effect.generation) >= 2, `job ${String(id)} was re-claimed`);
        }
        assert.ok(interrupted > 0, 'the kills really interrupted jobs');
      } finally {
        for (const w of workers) w.kill('SIGKILL');
        await maintainer.stop();
      }
    });
  });

  it('fences a worker frozen past its lease: rescued, done elsewhere, its late completion refused', async () => {
    await withSchema('queue pause', async (ctx) => {
      const { lh, effects } = await setUp(ctx);
      const job = await lh.queue('work').enqueue({ holdMs: 3_000 });
      const frozen = startWorker(ctx, { LEASE_TTL_MS: '1000', WORKER_ID: 'frozen' });
      const maintainer = lh.maintainer({ interval: 100 });
      let rescuer: CliProcess | undefined;
      try {
        await frozen.waitForLine(/"event":"started"/, EVENT_TIMEOUT_MS);
        frozen.kill('SIGSTOP');
        maintainer.start();
        await waitFor(
          'the rescue',
          async () => (await lh.engine.jobGet({ id: job.id }))?.status === 'pending',
          { timeoutMs: EVENT_TIMEOUT_MS },
        );
        // The second worker gets a quick version of the same job: the payload is the frozen
        // worker's, so let it hold briefly and complete.
        rescuer = startWorker(ctx, { LEASE_TTL_MS: '10000', WORKER_ID: 'rescuer' });
        await rescuer.waitForLine(/"event":"completed"/, EVENT_TIMEOUT_MS);
        frozen.kill('SIGCONT');
        const { input: line } = await frozen.waitForLine(
          /"event":"completion-refused"/,
          EVENT_TIMEOUT_MS,
        );
        const refused = JSON.parse(line!) as { code: string; databaseAccepted: number };
        assert.equal(refused.code, 'lease_lost');
        assert.equal(refused.databaseAccepted, 0, 'the database refused the stale generation too');
        const resumed = events(frozen, 'resumed')[0]!;
        assert.equal(resumed['aborted'], true, "the frozen worker's signal had fired");
        const done = await effects();
        assert.equal(done.length, 1);
        assert.equal(done[0]!.worker, 'rescuer');
        const final = (await lh.engine.jobGet({ id: job.id }))!;
        assert.equal(final.status, 'completed');
        assert.equal(final.generation, 2);
      } finally {
        frozen.kill('SIGCONT');
        frozen.kill('SIGKILL');
        rescuer?.kill('SIGKILL');
        await maintainer.stop();
      }
    });
  });

  it('drains on SIGTERM: no new claims, in-flight jobs finish, the rest handed back at once', async () => {
    await withSchema('queue drain', async (ctx) => {
      const { lh } = await setUp(ctx);
      const quick = await lh.queue('work').enqueueMany([
        { payload: { sleepMs: 400 }, options: { priority: 9 } },
        { payload: { sleepMs: 400 }, options: { priority: 9 } },
      ]);
      // Far longer than any drain could take on a busy machine: handed back, it ends the drain
      // long before it would have finished.
      const SLOW_MS = 10 * EVENT_TIMEOUT_MS;
      // Room for the quick jobs in hand to finish on a busy machine.
      const DRAIN_TIMEOUT_MS = 5_000;
      const slow = await lh.queue('work').enqueue({ sleepMs: SLOW_MS }, { priority: 5 });
      const waiting = await lh
        .queue('work')
        .enqueueMany(Array.from({ length: 5 }, () => ({ payload: { sleepMs: 10 } })));
      const worker = startWorker(ctx, {
        CONCURRENCY: '3',
        DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
        WORKER_ID: 'drainer',
      });
      await worker.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS);
      await waitFor('three jobs running', () => events(worker, 'started').length === 3, {
        timeoutMs: EVENT_TIMEOUT_MS,
      });
      const termAt = performance.now();
      worker.kill('SIGTERM');
      const { input: line } = await worker.waitForLine(/"event":"drained"/, EVENT_TIMEOUT_MS);
      const handBackMs = performance.now() - termAt;
      const exit = await worker.exited();
      assert.equal(exit.code, 0);
      assert.equal(JSON.parse(line!).handedBack, 1);
      // The drain waited for the jobs in hand up to its timeout, then handed the slow one back
      // instead of waiting for it: after the timeout, long before the slow job's end.
      assert.ok(
        handBackMs >= DRAIN_TIMEOUT_MS && handBackMs < SLOW_MS / 2,
        `handed back ${Math.round(handBackMs)} ms after SIGTERM (drain timeout ${DRAIN_TIMEOUT_MS} ms, slow job ${SLOW_MS} ms)`,
      );
      // What the worker did before and after it heard SIGTERM, in the order it said it. A quick
      // job can end, and a waiting one be claimed, before the signal arrives on a busy machine.
      const said = worker.lines
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { event: string; id?: number });
      const draining = said.findIndex((e) => e.event === 'draining');
      assert.ok(draining >= 0, 'the worker heard SIGTERM');
      const claimedAfter = said.slice(draining).filter((e) => e.event === 'started');
      assert.deepEqual(claimedAfter, [], 'nothing claimed after SIGTERM');
      const claimedBefore = new Set(
        said.slice(0, draining).flatMap((e) => (e.event === 'started' ? [e.id] : [])),
      );
      for (const q of quick) {
        assert.ok(claimedBefore.has(q.id), `quick job ${q.id} was in hand`);
        assert.equal((await lh.engine.jobGet({ id: q.id }))!.status, 'completed');
      }
      const back = (await lh.engine.jobGet({ id: slow.id }))!;
      assert.equal(back.status, 'pending');
      assert.equal(back.attempts, 0, 'the handed-back attempt was given back');
      for (const w of waiting) {
        const j = (await lh.engine.jobGet({ id: w.id }))!;
        if (claimedBefore.has(w.id)) assert.equal(j.status, 'completed', `job ${w.id} finished`);
        else {
          assert.equal(j.status, 'pending', `job ${w.id} was left for others`);
          assert.equal(j.attempts, 0);
        }
      }
      const [row] = await lh.engine.workerList({ limit: 10 });
      assert.equal(row?.status, 'stopped');
    });
  });

  it('processes jobs by polling alone when notifications are off', async () => {
    await withSchema('queue polling', async (ctx) => {
      const { lh, effects } = await setUp(ctx);
      const worker = startWorker(ctx, { NOTIFICATIONS: '0', WORKER_ID: 'poller' });
      try {
        await worker.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS);
        await lh.queue('work').enqueueMany(Array.from({ length: 20 }, () => ({ payload: {} })));
        await waitFor('twenty effects', async () => (await effects()).length === 20, {
          timeoutMs: EVENT_TIMEOUT_MS,
        });
      } finally {
        worker.kill('SIGKILL');
      }
    });
  });
});
