import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { isLeaseholdError } from '../../../src/core/errors.js';
import type { Job } from '../../../src/core/types.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../../src/leasehold.js';
import { PermanentJobError } from '../../../src/queue/retry-policy.js';
import type { Worker } from '../../../src/queue/worker.js';
import type { WorkerOptions } from '../../../src/queue/worker-options.js';
import { faultyEngine } from '../../support/faulty-engine.js';
import { pumpFor, pumpUntil } from '../../support/manual-time.js';
import { deferred } from '../../support/wait.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

/**
 * The worker on every engine. Time is a ManualClock (PostgreSQL's `now` pinned to it), so
 * leases, retries and polling are driven by `pumpUntil`, never by sleeping; database round
 * trips still take real time, which is why the pump gives I/O a moment between steps.
 */
export function workerCases(h: EngineHarness): void {
  describe(`[${h.name}] toolkit: worker`, () => {
    conformanceCase(
      h,
      'runs enqueued jobs once each and stores their results, the token being the generation',
      async ({ lh, clock, engine }) => {
        const queued = await lh
          .queue('emails')
          .enqueueMany([1, 2, 3].map((n) => ({ payload: { n } })));
        const seen = new Map<number, { token: number; attempt: number }>();
        const worker = await startWorker(lh, {
          queues: 'emails',
          handler: async (job, ctx) => {
            seen.set(job.id, { token: ctx.token, attempt: ctx.attempt });
            return { doubled: (job.payload as { n: number }).n * 2 };
          },
        });
        try {
          await pumpUntil(
            clock,
            'three completed jobs',
            async () => (await byStatus(engine, 'emails', 'completed')).length === 3,
          );
        } finally {
          await worker.stop();
        }
        for (const q of queued) {
          const job = (await engine.jobGet({ id: q.id }))!;
          assert.deepEqual(job.result, { doubled: (q.payload as { n: number }).n * 2 });
          assert.equal(job.attempts, 1);
          assert.deepEqual(seen.get(q.id), { token: job.generation, attempt: 1 });
        }
      },
    );

    conformanceCase(
      h,
      'with removeOnComplete deletes completed jobs and keeps failed ones',
      async ({ lh, clock, engine }) => {
        const [ok, bad] = await lh
          .queue('once')
          .enqueueMany([{ payload: 'ok' }, { payload: 'bad', options: { maxAttempts: 1 } }]);
        const completed: number[] = [];
        const worker = await startWorker(lh, {
          queues: 'once',
          removeOnComplete: true,
          handler: async (job) => {
            if (job.payload === 'bad') throw new Error('bad payload');
            return 'result';
          },
        });
        worker.events.on('job:completed', ({ job }) => completed.push(job.id));
        try {
          await pumpUntil(
            clock,
            'the completion and the dead letter',
            async () =>
              completed.length === 1 && (await engine.jobGet({ id: bad!.id }))?.status === 'dead',
          );
        } finally {
          await worker.stop();
        }
        assert.deepEqual(completed, [ok!.id]);
        assert.equal(await engine.jobGet({ id: ok!.id }), null, 'the completed job is gone');
      },
    );

    conformanceCase(
      h,
      'never runs more handlers at once than its concurrency',
      async ({ lh, clock }) => {
        await lh.queue('q').enqueueMany(Array.from({ length: 7 }, (_, i) => ({ payload: i })));
        let running = 0;
        let peak = 0;
        let done = 0;
        const gates: (() => void)[] = [];
        const worker = await startWorker(lh, {
          queues: ['q'],
          concurrency: 3,
          handler: async () => {
            running++;
            peak = Math.max(peak, running);
            await new Promise<void>((resolve) => gates.push(resolve));
            running--;
            done++;
          },
        });
        try {
          await pumpUntil(clock, 'three handlers running', () => running === 3);
          await pumpFor(clock, 100);
          assert.equal(running, 3, 'a fourth job was not started while three ran');
          while (done < 7) {
            gates.shift()?.();
            await pumpFor(clock, 10);
          }
          assert.equal(peak, 3);
        } finally {
          for (const open of gates) open();
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      'retries a failing job with backoff, then dead-letters it with its errors',
      async ({ lh, clock, engine }) => {
        const job = await lh.queue('flaky').enqueue({}, { maxAttempts: 3 });
        let calls = 0;
        const worker = await startWorker(lh, {
          queues: 'flaky',
          retryBackoff: { baseMs: 200, capMs: 200 },
          handler: async (_job, ctx) => {
            calls++;
            throw new Error(`boom on attempt ${ctx.attempt}`);
          },
        });
        try {
          const dead = await pumpUntil(
            clock,
            'the dead letter',
            async () => {
              const j = await engine.jobGet({ id: job.id });
              return j?.status === 'dead' ? j : null;
            },
            { stepMs: 20 },
          );
          assert.equal(calls, 3);
          assert.equal(dead.attempts, 3);
          assert.match(dead.lastError ?? '', /boom on attempt 3/);
          assert.deepEqual(
            dead.errors.map((e) => e.attempt),
            [1, 2, 3],
          );
        } finally {
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      'dead-letters at once on a PermanentJobError',
      async ({ lh, clock, engine }) => {
        const job = await lh.queue('q').enqueue({}, { maxAttempts: 5 });
        const worker = await startWorker(lh, {
          queues: 'q',
          handler: async () => {
            throw new PermanentJobError('malformed payload');
          },
        });
        try {
          const dead = await pumpUntil(clock, 'the dead letter', async () => {
            const j = await engine.jobGet({ id: job.id });
            return j?.status === 'dead' ? j : null;
          });
          assert.equal(dead.attempts, 1);
          assert.match(dead.lastError ?? '', /malformed payload/);
        } finally {
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      'dispatches by job type to `handlers`, and dead-letters a type it has no handler for',
      async ({ lh, clock, engine }) => {
        const q = lh.queue<{ email: { to: string }; sms: { number: string } }>('typed');
        const email = await q.enqueue({ to: 'ada@example.com' }, { type: 'email', maxAttempts: 5 });
        const sms = await q.enqueue({ number: '+33 1' }, { type: 'sms', maxAttempts: 5 });
        const untyped = await lh.queue('typed').enqueue({}, { maxAttempts: 5 });
        const other = await lh.queue('typed').enqueue({}, { type: 'fax', maxAttempts: 5 });
        const worker = await startWorker(lh, {
          queues: 'typed',
          handlers: {
            email: async (job) => `sent to ${(job.payload as { to: string }).to}`,
            sms: async (job) => `texted ${(job.payload as { number: string }).number}`,
          },
        });
        try {
          const ids = [email.id, sms.id, untyped.id, other.id];
          const jobs = await pumpUntil(clock, 'every job settled', async () => {
            const all = await Promise.all(ids.map((id) => engine.jobGet({ id })));
            return all.every((j) => j?.status === 'completed' || j?.status === 'dead') ? all : null;
          });
          const [e, s, u, o] = jobs;
          assert.deepEqual([e?.status, e?.result], ['completed', 'sent to ada@example.com']);
          assert.deepEqual([s?.status, s?.result], ['completed', 'texted +33 1']);
          assert.equal(u?.status, 'dead');
          assert.equal(u?.attempts, 1, 'dead at once, not retried');
          assert.match(
            u?.lastError ?? '',
            /has no type, and this worker handles only the types "email", "sms"/,
          );
          assert.equal(o?.status, 'dead');
          assert.match(
            o?.lastError ?? '',
            /no handler for job type "fax": this worker handles "email", "sms"/,
          );
        } finally {
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      "with unknownTypes 'leave', claims only its handlers' types and leaves the rest pending",
      async ({ lh, clock, engine }) => {
        const q = lh.queue('mixed');
        const [email, fax, untyped, keyedFax, keyedEmail] = await q.enqueueMany([
          { payload: 1, options: { type: 'email' } },
          { payload: 2, options: { type: 'fax' } },
          { payload: 3 },
          { payload: 4, options: { type: 'fax', partitionKey: 'p' } },
          { payload: 5, options: { type: 'email', partitionKey: 'p' } },
        ]);
        await assert.rejects(
          startWorker(lh, { queues: 'mixed', handler: async () => 1, unknownTypes: 'leave' }),
          (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === 'unknownTypes',
        );
        const ran: number[] = [];
        const emails = await startWorker(lh, {
          queues: 'mixed',
          unknownTypes: 'leave',
          handlers: { email: async (job) => void ran.push(job.id) },
        });
        try {
          await pumpUntil(clock, 'the email job done', async () =>
            (await engine.jobGet({ id: email!.id }))?.status === 'completed' ? true : null,
          );
          await pumpFor(clock, 300);
          assert.deepEqual(ran, [email!.id], 'the keyed email waits behind its partition head');
          for (const job of [fax, untyped, keyedFax, keyedEmail])
            assert.equal((await engine.jobGet({ id: job!.id }))?.status, 'pending');
          const faxes = await startWorker(lh, {
            queues: 'mixed',
            unknownTypes: 'leave',
            handlers: { fax: async (job) => void ran.push(job.id) },
          });
          try {
            await pumpUntil(clock, 'both faxes and the keyed email done', () =>
              ran.length === 4 ? true : null,
            );
            assert.deepEqual(
              [...ran].sort((x, y) => x - y),
              [email!.id, fax!.id, keyedFax!.id, keyedEmail!.id],
            );
            assert.ok(
              ran.indexOf(keyedEmail!.id) > ran.indexOf(keyedFax!.id),
              'the keyed email runs once its partition head (a fax) ran',
            );
            assert.equal((await engine.jobGet({ id: untyped!.id }))?.status, 'pending');
          } finally {
            await faxes.stop();
          }
        } finally {
          await emails.stop();
        }
      },
    );

    conformanceCase(
      h,
      'keeps a long job by renewing its lease, in one statement per interval for all jobs',
      async ({ lh, clock, engine }) => {
        await lh.queue('long').enqueueMany([{ payload: 1 }, { payload: 2 }]);
        const probe = faultyEngine(engine);
        const gate = deferred();
        const signals: AbortSignal[] = [];
        const worker = await startWorker(Leasehold.fromEngine(probe.engine), {
          queues: 'long',
          leaseTtl: 1_000,
          renewEvery: 300,
          handler: async (_job, ctx) => {
            signals.push(ctx.signal);
            await gate.promise;
          },
        });
        try {
          await pumpUntil(clock, 'both jobs running', () => signals.length === 2);
          const renewalsBefore = probe.calls('jobRenewLeases');
          // Three ttls; each step waits for a renewal in flight to return (a slow machine's
          // round trip must not look like a lost lease).
          await pumpFor(clock, 3_000, 20, () => probe.pending('jobRenewLeases') === 0);
          const renewals = probe.calls('jobRenewLeases') - renewalsBefore;
          assert.ok(
            renewals >= 8 && renewals <= 11,
            `one renewal per 300 ms for both jobs, got ${renewals}`,
          );
          assert.ok(
            signals.every((s) => !s.aborted),
            'no job lost its lease',
          );
          gate.resolve();
          await pumpUntil(
            clock,
            'both completed',
            async () => (await byStatus(engine, 'long', 'completed')).length === 2,
          );
        } finally {
          gate.resolve();
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      "fires the job's signal at its trust deadline when renewals hang, before the lease expires",
      async ({ lh, clock, engine }) => {
        const queued = await lh.queue('q').enqueue({});
        const faulty = faultyEngine(engine);
        let signal: AbortSignal | undefined;
        const lost: number[] = [];
        const worker = await startWorker(Leasehold.fromEngine(faulty.engine), {
          queues: 'q',
          leaseTtl: 1_000,
          renewEvery: 300,
          handler: async (_job, ctx) => {
            signal = ctx.signal;
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
          },
        });
        worker.events.on('job:lost', ({ job }) => lost.push(job.id));
        try {
          await pumpUntil(clock, 'the job running', () => signal);
          faulty.set('jobRenewLeases', 'hang');
          const claimed = (await engine.jobGet({ id: queued.id }))!;
          await pumpUntil(clock, 'the signal', () => signal!.aborted, { stepMs: 10 });
          assert.ok(isLeaseholdError(signal!.reason, 'lease_lost'));
          assert.ok(
            clock.now() < claimed.leaseExpiresAt!,
            'the holder stopped trusting the lease before the database expired it',
          );
          // The deadline is reported as a lost job, once, and not again by later renewals.
          assert.deepEqual(lost, [queued.id]);
          faulty.set('jobRenewLeases', 'pass');
          await pumpFor(clock, 1_000);
          assert.deepEqual(lost, [queued.id]);
        } finally {
          faulty.set('jobRenewLeases', 'pass');
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      'fires the signal of a running job that is cancelled, and its completion is refused',
      async ({ lh, clock, engine }) => {
        const queued = await lh.queue('q').enqueue({});
        let signal: AbortSignal | undefined;
        const lost: number[] = [];
        const worker = await startWorker(lh, {
          queues: 'q',
          leaseTtl: 3_000,
          handler: async (_job, ctx) => {
            signal = ctx.signal;
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
            return 'finished anyway';
          },
        });
        worker.events.on('job:lost', ({ job }) => lost.push(job.id));
        try {
          await pumpUntil(clock, 'the job running', () => signal);
          await engine.jobCancel({ id: queued.id });
          await pumpUntil(clock, 'the signal', () => signal!.aborted, { stepMs: 50 });
          assert.ok(isLeaseholdError(signal!.reason, 'lease_lost'));
          await pumpUntil(clock, 'the lost event', () => lost.length === 1);
          const job = (await engine.jobGet({ id: queued.id }))!;
          assert.equal(job.status, 'cancelled');
          assert.equal(job.result, null);
        } finally {
          await worker.stop();
        }
      },
    );

    conformanceCase(
      h,
      'drains: stops claiming, lets quick jobs finish, hands the rest back with attempts restored',
      async ({ lh, clock, engine }) => {
        const quick = await lh.queue('d').enqueue('quick', { priority: 2 });
        const stubborn = await lh.queue('d').enqueue('stubborn', { priority: 1 });
        const later = await lh.queue('d').enqueue('later', { priority: 0 });
        const quickGate = deferred();
        let stubbornSignal: AbortSignal | undefined;
        const started: unknown[] = [];
        const worker = await startWorker(lh, {
          queues: 'd',
          concurrency: 2,
          handler: async (job, ctx) => {
            started.push(job.payload);
            if (job.payload === 'quick') return quickGate.promise;
            stubbornSignal = ctx.signal;
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
            return undefined;
          },
        });
        await pumpUntil(clock, 'two jobs running', () => started.length === 2);
        const draining = worker.drain({ timeout: 1_000 });
        await pumpFor(clock, 50);
        quickGate.resolve();
        let result: { handedBack: number } | undefined;
        void draining.then((r) => (result = r));
        await pumpUntil(clock, 'the drain', () => result, { stepMs: 50 });
        assert.equal(result!.handedBack, 1);
        assert.deepEqual(
          started,
          ['quick', 'stubborn'],
          'nothing was claimed after the drain began',
        );
        assert.ok(stubbornSignal!.aborted);
        assert.equal((await engine.jobGet({ id: quick.id }))!.status, 'completed');
        const back = (await engine.jobGet({ id: stubborn.id }))!;
        assert.equal(back.status, 'pending');
        assert.equal(back.attempts, 0, 'the hand-back gave the attempt back');
        assert.equal((await engine.jobGet({ id: later.id }))!.status, 'pending');
        const [row] = await engine.workerList({ limit: 10 });
        assert.equal(row?.status, 'stopped');
        assert.equal(worker.state, 'stopped');
      },
    );

    conformanceCase(
      h,
      'runs one job per partition at a time, in enqueue order, while other partitions flow',
      async ({ lh, clock, engine }) => {
        const q = lh.queue('orders');
        await q.enqueueMany(
          ['a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4'].map((p) => ({
            payload: p,
            options: { partitionKey: p[0]! },
          })),
        );
        const inFlight = new Map<string, number>();
        const order: string[] = [];
        let overlap = false;
        const worker = await startWorker(lh, {
          queues: 'orders',
          concurrency: 4,
          handler: async (job) => {
            const key = job.partitionKey!;
            inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
            if (inFlight.get(key)! > 1) overlap = true;
            order.push(job.payload as string);
            await new Promise((resolve) => setTimeout(resolve, 2));
            inFlight.set(key, inFlight.get(key)! - 1);
          },
        });
        try {
          await pumpUntil(
            clock,
            'all seven done',
            async () => (await byStatus(engine, 'orders', 'completed')).length === 7,
          );
        } finally {
          await worker.stop();
        }
        assert.equal(overlap, false, 'never two jobs of one partition in flight');
        assert.deepEqual(
          order.filter((p) => p[0] === 'a'),
          ['a1', 'a2', 'a3', 'a4'],
        );
        assert.deepEqual(
          order.filter((p) => p[0] === 'b'),
          ['b1', 'b2', 'b3'],
        );
      },
    );

    conformanceCase(
      h,
      'wakes on an enqueue notification instead of waiting for its poll interval',
      async ({ lh, clock, engine }) => {
        const worker = await startWorker(lh, {
          queues: 'fast',
          pollInterval: '1h',
          handler: async () => 'ok',
        });
        try {
          await pumpFor(clock, 50); // the first poll has found nothing
          const before = clock.monotonic();
          const job = await lh.queue('fast').enqueue({});
          await pumpUntil(
            clock,
            'the job completed',
            async () => (await engine.jobGet({ id: job.id }))?.status === 'completed',
            { stepMs: 1 },
          );
          assert.ok(clock.monotonic() - before < 60_000, 'long before the next poll');
        } finally {
          await worker.stop();
        }
      },
      { requires: ['notifications'] },
    );

    conformanceCase(
      h,
      "completes a job inside the handler's own transaction, atomically with its business write",
      async ({ lh, clock, engine }) => {
        const pool = (engine as PostgresEngine).pool;
        const schema = (engine as PostgresEngine).schema;
        await pool.query(`CREATE TABLE "${schema}".invoices (job_id bigint PRIMARY KEY)`);
        const kept = await lh.queue('billing').enqueue('commit', { maxAttempts: 1 });
        const undone = await lh.queue('billing').enqueue('rollback', { maxAttempts: 1 });
        const worker = await startWorker(lh, {
          queues: 'billing',
          handler: async (job, ctx) => {
            const client = await pool.connect();
            try {
              await client.query('BEGIN');
              await client.query(`INSERT INTO "${schema}".invoices VALUES ($1)`, [job.id]);
              await ctx.complete(client, { invoiced: true });
              if (job.payload === 'rollback') {
                await client.query('ROLLBACK');
                throw new Error('the business transaction rolled back');
              }
              await client.query('COMMIT');
            } finally {
              client.release();
            }
          },
        });
        try {
          await pumpUntil(clock, 'both settled', async () => {
            const a = await engine.jobGet({ id: kept.id });
            const b = await engine.jobGet({ id: undone.id });
            return a?.status === 'completed' && b?.status === 'dead';
          });
        } finally {
          await worker.stop();
        }
        const { rows } = await pool.query(`SELECT job_id FROM "${schema}".invoices`);
        assert.deepEqual(
          rows.map((r: { job_id: string }) => Number(r.job_id)),
          [kept.id],
        );
        assert.deepEqual((await engine.jobGet({ id: kept.id }))!.result, { invoiced: true });
        assert.equal((await engine.jobGet({ id: undone.id }))!.result, null);
      },
      { requires: ['callerTransactions'], engine: 'postgres' },
    );

    conformanceCase(
      h,
      'refuses bad options with invalid_argument naming the field',
      async ({ lh }) => {
        const handler = async (): Promise<void> => {};
        const bad: [Partial<WorkerOptions>, string][] = [
          [{ queues: [] }, 'queues'],
          [{ queues: 'q', concurrency: 0 }, 'concurrency'],
          [{ queues: 'q', leaseTtl: 'soon' }, 'leaseTtl'],
          [{ queues: 'q', leaseTtl: 1_000, renewEvery: 5_000 }, 'renewEvery'],
          [{ queues: 'q', handler: 'no' as never }, 'handler'],
        ];
        for (const [options, field] of bad) {
          assert.throws(
            () => lh.worker({ handler, ...options } as WorkerOptions),
            (e: unknown) => isLeaseholdError(e, 'invalid_argument') && e.details['field'] === field,
            field,
          );
        }
      },
    );
  });
}

async function startWorker(
  lh: Leasehold,
  options: Omit<WorkerOptions, 'pollInterval'> & { pollInterval?: WorkerOptions['pollInterval'] },
): Promise<Worker> {
  const worker = lh.worker({ pollInterval: 200, flushWindow: 0, ...options });
  await worker.start();
  return worker;
}

function byStatus(engine: Engine, queue: string, status: Job['status']): Promise<Job[]> {
  return engine.jobList({ queue, status, limit: 100, offset: 0 });
}
