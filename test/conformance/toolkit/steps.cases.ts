import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { Job } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { quoteSchema } from '../../../src/engine/postgres/sql-identifiers.js';
import type { StepTransaction } from '../../../src/engine/steps.js';
import { Leasehold } from '../../../src/leasehold.js';
import type { JobContext } from '../../../src/queue/worker-options.js';
import type { WorkerEvents } from '../../../src/queue/worker.js';
import { faultyEngine } from '../../support/faulty-engine.js';
import { pumpFor, pumpUntil } from '../../support/manual-time.js';
import { deferred, waitFor } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/**
 * Where a step's writes go, per engine: on PostgreSQL a table written through the step's `tx`;
 * in memory an array pushed to by `tx.onCommit`. Either way an entry exists only if its step
 * committed.
 */
interface Ledger {
  write(tx: StepTransaction, entry: string): Promise<void>;
  entries(): Promise<string[]>;
}

async function ledgerOf(engine: Engine): Promise<Ledger> {
  if (engine.name === 'postgres') {
    const pg = engine as PostgresEngine;
    const table = `${quoteSchema(pg.schema)}.step_ledger`;
    await pg.pool.query(`CREATE TABLE ${table} (seq serial PRIMARY KEY, entry text NOT NULL)`);
    return {
      write: async (tx, entry) =>
        void (await tx.query(`INSERT INTO ${table} (entry) VALUES ($1)`, [entry])),
      entries: async () =>
        (
          await pg.pool.query<{ entry: string }>(`SELECT entry FROM ${table} ORDER BY seq`)
        ).rows.map((row) => row.entry),
    };
  }
  const entries: string[] = [];
  return {
    write: async (tx, entry) => tx.onCommit(() => entries.push(entry)),
    entries: async () => [...entries],
  };
}

const lost = (e: unknown): boolean => isLeaseholdError(e, 'lease_lost');
const invalid =
  (field: string) =>
  (e: unknown): boolean =>
    isLeaseholdError(e, 'invalid_argument') && (e.details as { field?: string }).field === field;

async function untilStatus(
  engine: Engine,
  clock: Parameters<typeof pumpUntil>[0],
  id: number,
  status: Job['status'],
): Promise<Job> {
  return pumpUntil(
    clock,
    `job ${id} ${status}`,
    async () => {
      const job = await engine.jobGet({ id });
      return job?.status === status ? job : null;
    },
    { stepMs: 20 },
  );
}

/**
 * Workflow steps and sleeps (decision 0254) on every engine: a step's writes and its record
 * commit together, once, under the run's ownership of the job; a sleep ends the attempt without
 * a slot and without spending an attempt.
 */
export function stepCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: steps`, () => {
    conformanceCase(
      h,
      'a job failing after two steps resumes at the third: recorded steps answer without running, writes through tx happen once, bad input records nothing; a retried dead job keeps its steps',
      async ({ lh, clock, engine }) => {
        const ledger = await ledgerOf(engine);
        const queue = lh.queue('workflow');
        // Both fail once in step three: one is retried by its policy, the other dies and is
        // retried by an admin.
        const retried = await queue.enqueue({ name: 'retried' }, { maxAttempts: 3 });
        const dead = await queue.enqueue({ name: 'dead' }, { maxAttempts: 1 });
        const failOnce = new Set([retried.id, dead.id]);
        const ran: string[] = [];
        const keys = new Set<string>();
        const refusals: PromiseSettledResult<unknown>[] = [];
        const cycle: Record<string, unknown> = {};
        cycle.self = cycle;
        const worker = lh.worker({
          queues: 'workflow',
          pollInterval: 50,
          flushWindow: 0,
          retryBackoff: { baseMs: 0, capMs: 0 },
          handler: async (job, ctx) => {
            const tag = (step: string): string => `${job.id}:${step}`;
            const one = await ctx.step('one', async (tx, step) => {
              ran.push(`${tag('one')}@${step.attempt}`);
              keys.add(step.key);
              await ledger.write(tx, tag('one'));
              return { n: 1, at: new Date(0) };
            });
            const two = await ctx.step('two', async (tx) => {
              ran.push(tag('two'));
              await ledger.write(tx, tag('two'));
            });
            if (!failOnce.has(job.id)) {
              // The resumed run: the same name again answers the recorded value, and bad
              // input is refused, its writes rolled back and nothing recorded.
              const again = await ctx.step('one', () => {
                throw new Error('a recorded step must not run again');
              });
              assert.deepEqual(again, one);
              refusals.push(
                ...(await Promise.allSettled([
                  ctx.step('', async () => 1),
                  ctx.step('x'.repeat(201), async () => 1),
                  ctx.step('bigint', async (tx) => {
                    await ledger.write(tx, tag('bigint'));
                    return 1n;
                  }),
                  ctx.step('function', async (tx) => {
                    await ledger.write(tx, tag('function'));
                    return () => 1;
                  }),
                  ctx.step('cycle', async (tx) => {
                    await ledger.write(tx, tag('cycle'));
                    return cycle;
                  }),
                ])),
              );
            }
            const three = await ctx.step('three', async (tx) => {
              ran.push(`${tag('three')}@${ctx.attempt}`);
              await ledger.write(tx, tag('three'));
              if (failOnce.delete(job.id)) throw new Error('step three failed');
              return 'three';
            });
            return { one, two, three };
          },
        });
        await worker.start();
        try {
          const done = await untilStatus(engine, clock, retried.id, 'completed');
          const died = await untilStatus(engine, clock, dead.id, 'dead');
          assert.match(died.lastError ?? '', /step three failed/);
          assert.deepEqual(
            (await lh.jobs.steps(dead.id)).map((s) => s.name),
            ['one', 'two'],
            'the failed step is not recorded',
          );
          await lh.jobs.retry(dead.id);
          const revived = await untilStatus(engine, clock, dead.id, 'completed');

          const expected = {
            one: { n: 1, at: new Date(0).toISOString() },
            two: null,
            three: 'three',
          };
          assert.deepEqual(done.result, expected);
          assert.deepEqual(revived.result, expected);
          assert.equal(done.attempts, 2);
          assert.equal(revived.attempts, 1, 'the admin retry started its attempts again');
          for (const id of [retried.id, dead.id]) {
            const mine = (entry: string): boolean => entry.startsWith(`${id}:`);
            assert.deepEqual(
              ran.filter(mine),
              [
                `${id}:one@1`,
                `${id}:two`,
                `${id}:three@1`,
                `${id}:three@${id === dead.id ? 1 : 2}`,
              ],
              'steps one and two ran once; three ran again after rolling back',
            );
            assert.deepEqual(
              (await ledger.entries()).filter(mine),
              [`${id}:one`, `${id}:two`, `${id}:three`],
              'each write through tx took effect once; the failed and refused steps wrote nothing',
            );
            const steps = await lh.jobs.steps(id);
            assert.deepEqual(
              steps.map((s) => [s.name, s.value]),
              [
                ['one', expected.one],
                ['two', null],
                ['three', 'three'],
              ],
            );
            const job = (await engine.jobGet({ id }))!;
            assert.equal(
              steps[2]!.generation,
              job.generation,
              'three was recorded by the last run',
            );
            assert.ok(steps[0]!.generation < job.generation, 'one was recorded by the first');
          }
          assert.deepEqual(keys, new Set([`${retried.id}:one`, `${dead.id}:one`]));
          // Steps go with their job.
          assert.equal(await lh.jobs.delete(retried.id), true);
          assert.deepEqual(await lh.jobs.steps(retried.id), []);
          assert.equal((await lh.jobs.steps(dead.id)).length, 3);
          assert.equal(refusals.length, 10);
          const [noName, longName, bigint, fn, cyclic] = refusals.slice(0, 5);
          for (const [refusal, field] of [
            [noName, 'name'],
            [longName, 'name'],
            [bigint, 'value'],
            [fn, 'value'],
            [cyclic, 'value'],
          ] as const) {
            assert.equal(refusal?.status, 'rejected');
            assert.ok(invalid(field)((refusal as PromiseRejectedResult).reason));
          }
        } finally {
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      "a stale holder's step is rolled back and throws lease_lost, and its signal fires; its sleep changes nothing",
      async ({ lh, clock, engine }) => {
        const ledger = await ledgerOf(engine);
        const cancelled = await lh.queue('stale').enqueue({ scenario: 'cancelled' });
        const expiring = await lh.queue('stale').enqueue({ scenario: 'expired and claimed' });
        const faulty = faultyEngine(engine);
        const contexts = new Map<number, JobContext>();
        const releases = new Map([cancelled, expiring].map((job) => [job.id, deferred()]));
        const outcomes = new Map<number, Promise<unknown>>();
        const worker = Leasehold.fromEngine(faulty.engine).worker({
          queues: 'stale',
          concurrency: 2,
          pollInterval: 50,
          flushWindow: 0,
          leaseTtl: 1_000,
          renewEvery: 300,
          handler: async (job, ctx) => {
            contexts.set(job.id, ctx);
            const outcome = ctx.step('write', async (tx) => {
              await releases.get(job.id)!.promise;
              await ledger.write(tx, `${job.id}:stale`);
              return 'stale';
            });
            outcomes.set(job.id, outcome);
            return outcome;
          },
        });
        const lostJobs: number[] = [];
        worker.events.on('job:lost', (e) => lostJobs.push(e.job.id));
        await worker.start();
        try {
          await pumpUntil(clock, 'both steps running', () => outcomes.size === 2);
          const first = (await engine.jobGet({ id: expiring.id }))!;

          // Cancelled behind the worker's back while its step runs; no renewal has run since:
          // the step's refused record is how the run learns it.
          await engine.jobCancel({ id: cancelled.id });
          releases.get(cancelled.id)!.resolve();
          await assert.rejects(outcomes.get(cancelled.id)!, lost);
          const told = contexts.get(cancelled.id)!.signal;
          assert.ok(told.aborted && lost(told.reason), 'its signal fired');
          await pumpUntil(clock, 'the lost event', () => lostJobs.includes(cancelled.id));
          // After the loss a step throws without running.
          await assert.rejects(
            contexts.get(cancelled.id)!.step('later', () => {
              throw new Error('must not run');
            }),
            lost,
          );

          // The other's lease runs out (renewals hang) and another worker claims the job; then
          // the stale step's function writes and returns.
          faulty.set('jobRenewLeases', 'hang');
          faulty.set('jobClaimBatch', 'fail'); // worker-b takes it, not this worker again
          await pumpFor(clock, 1_100, 20);
          await engine.jobRescueExpired({ limit: 10, backoff: { baseMs: 0, capMs: 0 } });
          const [claimed] = await engine.jobClaimBatch({
            queues: ['stale'],
            workerId: 'worker-b',
            limit: 1,
            leaseTtlMs: 60_000,
          });
          assert.equal(claimed?.id, expiring.id);
          releases.get(expiring.id)!.resolve();
          await assert.rejects(outcomes.get(expiring.id)!, lost);
          assert.ok(contexts.get(expiring.id)!.signal.aborted);
          assert.deepEqual(await ledger.entries(), [], 'no stale write committed');
          assert.deepEqual(await lh.jobs.steps(expiring.id), []);
          assert.deepEqual(await lh.jobs.steps(cancelled.id), []);

          // The engine's guard itself: the stale term is refused, the new owner's accepted.
          const staleRef = { id: expiring.id, generation: first.generation };
          const noRun = await engine.jobStepRun({
            workerId: worker.id,
            ref: staleRef,
            name: 'write',
            body: async (tx) => {
              await ledger.write(tx, 'stale again');
              return 'stale';
            },
          });
          assert.deepEqual(noRun, { recorded: false });
          assert.equal(
            await engine.jobSleep({ workerId: worker.id, ref: staleRef, name: 'nap', delayMs: 1 }),
            null,
          );
          const untouched = (await engine.jobGet({ id: expiring.id }))!;
          assert.equal(untouched.status, 'processing');
          assert.equal(untouched.claimedBy, 'worker-b');
          assert.equal(untouched.attempts, claimed!.attempts, 'the stale sleep gave nothing back');
          const owner = await engine.jobStepRun({
            workerId: 'worker-b',
            ref: { id: claimed!.id, generation: claimed!.generation },
            name: 'write',
            body: async (tx) => {
              await ledger.write(tx, 'fresh');
              return 'fresh';
            },
          });
          assert.equal(owner.recorded && owner.value, 'fresh');
          assert.deepEqual(await ledger.entries(), ['fresh']);
          assert.deepEqual(
            (await lh.jobs.steps(expiring.id)).map((s) => [s.name, s.value, s.generation]),
            [['write', 'fresh', claimed!.generation]],
          );
        } finally {
          for (const release of releases.values()) release.resolve();
          faulty.set('jobRenewLeases', 'pass');
          faulty.set('jobClaimBatch', 'pass');
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      'ctx.sleep ends the attempt without a slot and gives the attempt back; woken early it sleeps the remainder; then it returns at once',
      async ({ lh, clock, engine }) => {
        const ledger = await ledgerOf(engine);
        const queue = lh.queue('naps');
        // One attempt only: a sleep that spent one would kill the job.
        const sleeper = await queue.enqueue({ n: 1 }, { key: 'sleeper', maxAttempts: 1 });
        const refusals: PromiseSettledResult<unknown>[] = [];
        let runs = 0;
        const worker = lh.worker({
          queues: 'naps',
          concurrency: 1,
          pollInterval: 50,
          flushWindow: 0,
          handler: async (job, ctx) => {
            if (job.id !== sleeper.id) return 'other';
            runs++;
            await ctx.step('before', (tx) => ledger.write(tx, 'before'));
            if (runs === 1)
              refusals.push(
                ...(await Promise.allSettled([
                  ctx.sleep('', 1),
                  ctx.sleep('nap', -1),
                  ctx.sleep('nap', 'soon'),
                ])),
              );
            try {
              await ctx.sleep('nap', '2s');
            } catch (error) {
              // A handler that catches its sleep and returns anyway: the worker ignores it.
              if (runs === 1) return 'ignored';
              throw error;
            }
            await ctx.step('after', (tx) => ledger.write(tx, 'after'));
            return `woke after ${runs} runs`;
          },
        });
        const slept: WorkerEvents['job:slept'][] = [];
        const failed: WorkerEvents['job:failed'][] = [];
        worker.events.on('job:slept', (e) => slept.push(e));
        worker.events.on('job:failed', (e) => failed.push(e));
        await worker.start();
        try {
          await pumpUntil(clock, 'the sleep', () => slept.length === 1);
          const asleep = (await engine.jobGet({ id: sleeper.id }))!;
          const until = slept[0]!.until;
          assert.equal(asleep.status, 'pending');
          assert.equal(asleep.attempts, 0, 'the attempt was given back');
          assert.equal(asleep.leaseExpiresAt, null);
          assert.equal(asleep.result, null, 'neither completed nor failed');
          assert.deepEqual(asleep.availableAt, until);
          assert.ok(until.getTime() - clock.now().getTime() > 1_500, 'about 2 s away');
          assert.deepEqual(
            (await lh.jobs.steps(sleeper.id)).map((s) => [s.name, s.value]),
            [
              ['before', null],
              ['nap', until.toISOString()],
            ],
          );
          assert.deepEqual(
            refusals.map((r) =>
              r.status === 'rejected' && isLeaseholdError(r.reason, 'invalid_argument')
                ? (r.reason.details as { field?: string }).field
                : r.status,
            ),
            ['name', 'duration', 'duration'],
          );
          // Its slot is free: another job runs meanwhile on this one-slot worker.
          const other = await queue.enqueue({ n: 2 });
          await untilStatus(engine, clock, other.id, 'completed');
          // The database shows the completion to this test's connection as it commits, a moment
          // before the worker has read its answer and let the run go.
          await waitFor('the worker to let the other job go', () => worker.inFlight === 0);

          // Woken early (the pending job replaced, available now): it sleeps the remainder.
          await queue.enqueue({ n: 1 }, { key: 'sleeper', onConflict: 'replace' });
          await pumpUntil(clock, 'the second sleep', () => slept.length === 2);
          assert.deepEqual(slept[1]!.until, until, 'the recorded instant is kept');
          assert.deepEqual((await engine.jobGet({ id: sleeper.id }))!.availableAt, until);
          assert.equal(runs, 2);

          // Past its instant it runs again: the sleep returns at once and the handler completes.
          const done = await untilStatus(engine, clock, sleeper.id, 'completed');
          assert.ok(clock.now().getTime() >= until.getTime());
          assert.equal(done.result, 'woke after 3 runs');
          assert.equal(done.attempts, 1);
          assert.deepEqual(await ledger.entries(), ['before', 'after']);
          assert.equal(slept.length, 2);
          assert.deepEqual(failed, []);
        } finally {
          await worker.stop();
        }
      },
    );
  });
}
