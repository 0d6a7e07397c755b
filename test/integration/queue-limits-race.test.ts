/**
 * Flow control against real concurrency (decision 0239). Claimers on their own connections
 * race for one limited queue, round after round; whatever the interleaving, the database must
 * keep every limit: the queue's concurrency (jobs_queue_slot), each key's (jobs_partition_processing)
 * and the rate's window (queues_rate_exact). A claim that lost a race runs again; one that
 * could not get through answers nothing rather than break a limit.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Job } from '../../src/core/types.js';
import type { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/clock.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const CLAIMERS = 8;
const ROUNDS = 12;

function claimAll(engines: PostgresEngine[], queue: string, limit: number): Promise<Job[][]> {
  return Promise.all(
    engines.map((engine, i) =>
      engine.jobClaimBatch({ queues: [queue], workerId: `w${i}`, limit, leaseTtlMs: 60_000 }),
    ),
  );
}

async function processing(engine: PostgresEngine, schema: string, queue: string): Promise<number> {
  const { rows } = await engine.pool.query<{ n: number }>(
    `SELECT count(*)::integer AS n FROM "${schema}".jobs WHERE queue = $1 AND status = 'processing'`,
    [queue],
  );
  return rows[0]!.n;
}

describe('queue limits under racing claimers on PostgreSQL', () => {
  it('never lets more jobs process than the concurrency cap, round after round', () =>
    withSchema('queue limits concurrency race', async ({ engine, schema }) => {
      const engines = await Promise.all(
        Array.from({ length: CLAIMERS }, () => engine({ poolSize: 1 })),
      );
      const [first] = engines as [PostgresEngine];
      await first.queueConfigure({ queue: 'q', change: { concurrency: 5 } });
      await first.jobEnqueue({
        jobs: Array.from({ length: 400 }, () => ({ queue: 'q', payload: {}, maxAttempts: 3 })),
      });
      let full = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const claimed = (await claimAll(engines, 'q', 3)).flat();
        assert.ok(claimed.length <= 5, `round ${round}: ${claimed.length} claimed, cap 5`);
        assert.ok((await processing(first, schema, 'q')) <= 5);
        if (claimed.length === 5) full++;
        const byWorker = new Map<string, Job[]>();
        for (const job of claimed)
          byWorker.set(job.claimedBy!, [...(byWorker.get(job.claimedBy!) ?? []), job]);
        for (const [workerId, jobs] of byWorker)
          await first.jobComplete({
            workerId,
            jobs: jobs.map((j) => ({ id: j.id, generation: j.generation })),
          });
      }
      // Racing claims do fill the cap (a claim that lost runs again on a fresh snapshot).
      assert.ok(full >= ROUNDS / 2, `the cap was filled in ${full} of ${ROUNDS} rounds`);
    }));

  it('keeps each key under perKeyConcurrency and the queue under its rate', () =>
    withSchema('queue limits key and rate race', async ({ engine, schema }) => {
      const engines = await Promise.all(
        Array.from({ length: CLAIMERS }, () => engine({ poolSize: 1 })),
      );
      const [first] = engines as [PostgresEngine];
      await first.queueConfigure({ queue: 'k', change: { perKeyConcurrency: 2 } });
      await first.jobEnqueue({
        jobs: Array.from({ length: 60 }, (_, i) => ({
          queue: 'k',
          payload: {},
          partitionKey: `key-${i % 3}`,
          maxAttempts: 3,
        })),
      });
      const keyed = (await claimAll(engines, 'k', 4)).flat();
      const perKey = new Map<string, number>();
      for (const job of keyed)
        perKey.set(job.partitionKey!, (perKey.get(job.partitionKey!) ?? 0) + 1);
      for (const [key, n] of perKey) assert.ok(n <= 2, `${key}: ${n} at once, cap 2`);
      assert.ok((await processing(first, schema, 'k')) <= 6);

      // A window of an hour: nothing leaves it during the test, so the total is exact.
      await first.queueConfigure({ queue: 'r', change: { rate: { limit: 7, per: 3_600_000 } } });
      await first.jobEnqueue({
        jobs: Array.from({ length: 100 }, () => ({ queue: 'r', payload: {}, maxAttempts: 3 })),
      });
      let started = 0;
      for (let round = 0; round < 4; round++)
        started += (await claimAll(engines, 'r', 3)).flat().length;
      assert.equal(started, 7, 'exactly the rate limit started within the window');
    }));

  // A claim's instant is its statement's start; its update of the window comes later. Three
  // pinned clocks play a slow claim (C, instant 400) reaching the row after a fast one (B, 1500)
  // had already pruned the window by its own instant. Without migration 11 C started a third
  // job in (-600, 400], a window of limit 2 that A had filled at 0 (seen failing: 1 claimed).
  it('refuses a start whose claim reaches the window after a newer claim pruned it', () =>
    withSchema('queue limits rate out of order', async ({ engine, schema }) => {
      const at = (ms: number): ManualClock => {
        const clock = new ManualClock(new Date('2030-01-01T00:00:00.000Z'));
        void clock.advance(ms);
        return clock;
      };
      const [a, b, c] = await Promise.all([0, 1_500, 400].map((ms) => engine({ clock: at(ms) })));
      await a!.queueConfigure({ queue: 'r', change: { rate: { limit: 2, per: 1_000 } } });
      await a!.jobEnqueue({
        jobs: Array.from({ length: 10 }, () => ({ queue: 'r', payload: {}, maxAttempts: 3 })),
      });
      const claim = (e: PostgresEngine, workerId: string, limit: number): Promise<Job[]> =>
        e.jobClaimBatch({ queues: ['r'], workerId, limit, leaseTtlMs: 60_000 });
      assert.equal((await claim(a!, 'a', 2)).length, 2, 'A fills the window at 0');
      assert.equal((await claim(b!, 'b', 1)).length, 1, 'B starts one at 1500');
      assert.equal(
        (await claim(c!, 'c', 1)).length,
        0,
        'C at 400 would be the third in (-600, 400]',
      );
      const { rows } = await a!.pool.query<{ n: number }>(
        `SELECT count(*)::integer AS n FROM "${schema}".jobs WHERE status = 'processing'`,
      );
      assert.equal(rows[0]!.n, 3);
    }));

  // A limited claim is a transaction of four statements (decision 0253); an idle worker polling
  // an empty limited queue must still cost one statement a poll (issue 26: the idle herd with
  // limits at most 1 query/s per process). Seen failing without the probe: 1 query and 1
  // transaction of 4 statements a poll.
  it('polls an idle limited queue with one statement, and claims as soon as a job comes', () =>
    withSchema('queue limits idle probe', async ({ engine }) => {
      const e = await engine({ poolSize: 2 });
      await e.queueConfigure({ queue: 'idle', change: { concurrency: 2 } });
      // pool.query checks a client out through pool.connect: a transaction is a connect of its own.
      const sent = { queries: 0, connects: 0 };
      const pool = e.pool as unknown as {
        query: (...args: unknown[]) => unknown;
        connect: (...args: unknown[]) => unknown;
      };
      const [query, connect] = [pool.query.bind(pool), pool.connect.bind(pool)];
      pool.query = (...args) => (sent.queries++, query(...args));
      pool.connect = (...args) => (sent.connects++, connect(...args));
      const claim = (): Promise<Job[]> =>
        e.jobClaimBatch({ queues: ['idle'], workerId: 'w', limit: 5, leaseTtlMs: 60_000 });
      assert.deepEqual(await claim(), [], 'the first claim learns that the queue is limited');
      for (let poll = 0; poll < 3; poll++) {
        const before = { ...sent };
        assert.deepEqual(await claim(), []);
        const queries = sent.queries - before.queries;
        const transactions = sent.connects - before.connects - queries;
        assert.deepEqual(
          { queries, transactions },
          { queries: 1, transactions: 0 },
          `poll ${poll}: one statement, no transaction`,
        );
      }
      await e.jobEnqueue({
        jobs: Array.from({ length: 3 }, () => ({ queue: 'idle', payload: {}, maxAttempts: 3 })),
      });
      assert.equal((await claim()).length, 2, 'the cap of 2, through the locked claim');
      assert.equal((await claim()).length, 0, 'no room left');
    }));

  it('refuses bad settings with invalid_argument naming the field, and changes nothing', async () => {
    const lh = Leasehold.memory();
    try {
      const queue = lh.queue('q');
      await queue.configure({ concurrency: 3 });
      const bad: [unknown, string][] = [
        [{ concurrency: 0 }, 'concurrency'],
        [{ concurrency: 1.5 }, 'concurrency'],
        [{ concurrency: 10_001 }, 'concurrency'],
        [{ perKeyConcurrency: -1 }, 'perKeyConcurrency'],
        [{ rate: { limit: 5, per: 9 } }, 'rate.per'],
        [{ rate: { limit: 0, per: 1000 } }, 'rate.limit'],
        [{ rate: { per: 1000 } }, 'rate.limit'],
        [{ rate: 5 }, 'rate'],
        [{ fairness: 'random' }, 'fairness'],
        [{ concurency: 3 }, 'concurency'],
        [null, 'settings'],
      ];
      for (const [input, field] of bad) {
        await assert.rejects(
          () => queue.configure(input as never),
          (error: unknown) => error instanceof InvalidArgumentError && error.field === field,
          JSON.stringify(input),
        );
      }
      assert.equal((await queue.settings()).concurrency, 3, 'nothing changed');
    } finally {
      await lh.close();
    }
  });
});
