/**
 * A library worker whose database goes silent mid-work (a proxy drops everything in both
 * directions and keeps the sockets open). Its jobs' signals must fire at their trust deadlines,
 * its statements must give up instead of hanging (a hard stop during the silence returns), and
 * after the heal no outcome may be applied twice: every job ends completed once, and only by
 * the run that held the job's current generation.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { FaultProxy } from '../chaos/harness/fault-proxy.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { watchLoopLag, type LoopLag } from '../support/loop-lag.js';
import { upstreamOf, viaPort } from '../support/proxied-url.js';
import { waitFor, within } from '../support/wait.js';

after(closeTestDatabase);

const LEASE_TTL_MS = 3_000;
/** The worker's statements give up after this long (the documented knobs of `connect`). */
const TIMEOUTS = { connectTimeoutMs: 1_000, statementTimeoutMs: 500, queryTimeoutMs: 1_000 };

describe('worker on a silent database', () => {
  it('fires signals at trust deadlines, does not hang, and applies no outcome twice', (t) =>
    withSchema('silent worker', async (schema) => {
      const { host, port } = upstreamOf(schema.url);
      const proxy = new FaultProxy(host, port);
      const workerPort = await proxy.portFor('worker');
      const direct = Leasehold.fromEngine(await schema.engine());
      const queue = direct.queue('silent');
      const ids: number[] = [];
      for (let n = 0; n < 4; n++) ids.push((await queue.enqueue({ n })).id);

      const partitioned = await Leasehold.connect({
        connectionString: viaPort(schema.url, workerPort),
        schema: schema.schema,
        ...TIMEOUTS,
      });
      let lag: LoopLag | undefined;
      let silentAt = Number.POSITIVE_INFINITY;
      const started = new Set<number>();
      const firedAfterMs = new Map<number, number>();
      const completedBy = new Map<number, string[]>();
      let silence!: () => void;
      const silenceBegan = new Promise<void>((resolve) => (silence = resolve));
      const a = partitioned.worker({
        queues: 'silent',
        id: 'worker-a',
        concurrency: 4,
        leaseTtl: LEASE_TTL_MS,
        flushWindow: 0,
        handler: async (job, { signal, token }) => {
          started.add(job.id);
          signal.addEventListener('abort', () =>
            firedAfterMs.set(job.id, performance.now() - silentAt),
          );
          const n = (job.payload as { n: number }).n;
          await silenceBegan;
          // Jobs 0 and 1 finish while the database is silent: their completions are sent into
          // the silence. Jobs 2 and 3 keep working until their signal fires.
          if (n >= 2)
            await new Promise((resolve) =>
              signal.addEventListener('abort', resolve, { once: true }),
            );
          return { by: 'a', token };
        },
      });
      const b = direct.worker({
        queues: 'silent',
        id: 'worker-b',
        concurrency: 4,
        leaseTtl: LEASE_TTL_MS,
        handler: async (_job, { token }) => ({ by: 'b', token }),
      });
      for (const [name, worker] of [
        ['a', a],
        ['b', b],
      ] as const)
        worker.events.on('job:completed', ({ job }) =>
          completedBy.set(job.id, [...(completedBy.get(job.id) ?? []), name]),
        );
      const maintainer = direct.maintainer({ interval: 100 });
      try {
        await a.start();
        await waitFor('worker a running all four jobs', () => started.size === 4, {
          timeoutMs: 15_000,
        });
        lag = watchLoopLag();
        silentAt = performance.now();
        proxy.setMode('worker', { kind: 'silent' });
        silence();

        // Trust runs out at most leaseTtl - margin after the last renewal sent before the
        // silence, so every signal fires within leaseTtl of it.
        await waitFor('every signal of worker a firing', () => firedAfterMs.size === 4, {
          timeoutMs: LEASE_TTL_MS + 10_000,
        });
        for (const [id, ms] of firedAfterMs)
          assert.ok(
            ms <= LEASE_TTL_MS + 500 + lag.maxMs,
            `job ${id}: signal ${Math.round(ms)} ms after the silence (ttl ${LEASE_TTL_MS} ms, loop lag ${Math.round(lag.maxMs)} ms)`,
          );

        // Nothing hangs: a hard stop while the database is still silent returns.
        const stopStarted = performance.now();
        await within(a.stop(), 15_000, 'worker a stopping while the database is silent');
        t.diagnostic(
          `signals ${[...firedAfterMs.values()].map(Math.round).join(', ')} ms after the silence; stop took ${Math.round(performance.now() - stopStarted)} ms`,
        );

        proxy.setMode('worker', { kind: 'pass' });
        await b.start();
        maintainer.start();
        await waitFor(
          'every job completed after the heal',
          async () => {
            const jobs = await Promise.all(ids.map((id) => direct.engine.jobGet({ id })));
            return jobs.every((j) => j?.status === 'completed') ? jobs : null;
          },
          { timeoutMs: 30_000, intervalMs: 100 },
        );
        for (const id of ids) {
          const job = await direct.engine.jobGet({ id });
          const result = job!.result as { by: string; token: number };
          assert.equal(
            result.token,
            job!.generation,
            `job ${id}: the stored outcome is the run of its current generation`,
          );
          assert.ok(
            (completedBy.get(id) ?? []).length <= 1,
            `job ${id} reported completed by ${JSON.stringify(completedBy.get(id))}`,
          );
        }
      } finally {
        lag?.stop();
        proxy.setMode('worker', { kind: 'pass' });
        await within(maintainer.stop(), 10_000, 'maintainer stop');
        await within(b.stop(), 10_000, 'worker b stop');
        await within(partitioned.close(), 15_000, 'closing the partitioned leasehold');
        await proxy.close();
      }
    }));
});
