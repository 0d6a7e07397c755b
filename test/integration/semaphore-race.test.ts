/**
 * Twenty acquirers on twenty connections race for the three permits of one semaphore, round
 * after round: the SKIP LOCKED slot grab and the per-name token counter must never grant more
 * than three valid permits at once, nor one token twice. Only real concurrency on a real
 * database can show it.
 *
 * - Frozen clock: each racer's engine has its `now` pinned to one ManualClock that stands still
 *   during a round, so every round grants exactly three permits (every slot is free when the
 *   round starts, and none frees during it). Rounds alternate between releasing the winners
 *   and letting them expire.
 * - Real time: racers acquire, hold for a moment and release, over and over, on the database
 *   clock. The check is the invariant itself, from the grants' intervals on that clock
 *   (acquiredAt to the release's instant): at no instant more than three overlap. No wall-clock
 *   bound is asserted (the machine is shared).
 * - Toolkit: twenty `acquire({ wait: true })` loops through `lh.locks.semaphore` never run more
 *   than three bodies at once, and every waiter gets its turns (releases wake the waiters).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { SemaphorePermit } from '../../src/core/types.js';
import type {
  PostgresEngine,
  PostgresEngineOptions,
} from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema, type SchemaContext } from '../support/database.js';
import { deferred, within } from '../support/wait.js';

const RACERS = 20;
const PERMITS = 3;
const NAME = 'contended';

after(closeTestDatabase);

/** One engine per racer, each with a pool of one: twenty connections, twenty backends. */
async function racers(
  schema: SchemaContext,
  options: Pick<PostgresEngineOptions, 'clock'> = {},
): Promise<PostgresEngine[]> {
  const engines = await Promise.all(
    Array.from({ length: RACERS }, () => schema.engine({ ...options, poolSize: 1 })),
  );
  // Prepare the statements on every connection first, so round one races like the others.
  await Promise.all(
    engines.map(async (engine, i) => {
      const name = `warm-up-${i}`;
      for (let k = 0; k < 2; k++) {
        const got = await engine.semaphoreAcquire({ name, holder: 'w', permits: 1, ttlMs: 60_000 });
        if (got.acquired) await engine.semaphoreRelease({ ...got.permit });
      }
      await engine.semaphoreRenew({ name, slot: 0, holder: 'w', token: 0, ttlMs: 1_000 });
    }),
  );
  return engines;
}

/** The most grants valid at one instant: a sweep over half-open intervals [start, end). */
function maxOverlap(intervals: readonly { start: number; end: number }[]): number {
  const events = intervals.flatMap((i) => [
    { at: i.start, delta: 1 },
    { at: i.end, delta: -1 },
  ]);
  // At equal instants an end comes first: [a, t) and [t, b) do not overlap.
  events.sort((x, y) => x.at - y.at || x.delta - y.delta);
  let open = 0;
  let most = 0;
  for (const e of events) {
    open += e.delta;
    most = Math.max(most, open);
  }
  return most;
}

describe('semaphore race on PostgreSQL', () => {
  it('grants exactly `permits` permits per round on a frozen clock, tokens never reused', async () => {
    await withSchema('semaphore race frozen', async (schema) => {
      const clock = new ManualClock();
      const engines = await racers(schema, { clock });
      const tokens = new Set<number>();
      let newest = 0;
      for (let round = 0; round < 20; round++) {
        const gate = deferred();
        const attempts = engines.map(async (engine, i) => {
          await gate.promise;
          return engine.semaphoreAcquire({
            name: NAME,
            holder: `racer-${i}`,
            permits: PERMITS,
            ttlMs: 10_000,
          });
        });
        gate.resolve();
        const outcomes = await Promise.all(attempts);
        const winners = outcomes.flatMap((o) => (o.acquired ? [o.permit] : []));
        assert.equal(winners.length, PERMITS, `round ${round}: exactly ${PERMITS} permits`);
        assert.deepEqual(
          winners.map((p) => p.slot).sort(),
          [0, 1, 2],
          `round ${round}: one permit per slot`,
        );
        // (A refusal may say retryAfterMs 0: its look at the slots can predate the winners' commits.)
        for (const o of outcomes) if (!o.acquired) assert.ok(o.retryAfterMs >= 0);
        const ordered = winners.map((p) => p.token).sort((a, b) => a - b);
        assert.ok(ordered[0]! > newest, `round ${round}: tokens above every earlier round's`);
        for (const t of ordered) {
          assert.ok(!tokens.has(t), `token ${t} handed out twice`);
          tokens.add(t);
        }
        newest = ordered.at(-1)!;
        if (round % 2 === 0) {
          const released = await Promise.all(
            winners.map((p) => engines[0]!.semaphoreRelease({ ...p })),
          );
          assert.ok(released.every((r) => r !== null));
        } else {
          await clock.advance(10_000);
        }
      }
      assert.equal(tokens.size, 20 * PERMITS);
      const { rows } = await engines[0]!.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema.schema}".semaphore_slots WHERE name = $1`,
        [NAME],
      );
      assert.equal(rows[0]!.n, PERMITS, 'one row per slot, no more');
    });
  });

  it('grants a free slot to the first acquire of a name whose slots another caller created meanwhile', async () => {
    // B's first try finds no slot rows; before B looks at the slots, A creates them and takes
    // one. Two slots are free when B looks: B must get one, not a refusal that says "retry now".
    // (B's look is held back in the driver, a slow network; the database is the real one.)
    await withSchema('semaphore fresh name handover', async (schema) => {
      const [a, b] = await Promise.all([
        schema.engine({ poolSize: 1 }),
        schema.engine({ poolSize: 1 }),
      ]);
      const aDone = deferred();
      const query = b!.pool.query.bind(b!.pool) as (...args: unknown[]) => Promise<unknown>;
      (b!.pool as { query: unknown }).query = async (...args: unknown[]) => {
        const config = args[0] as { text?: string };
        if (config.text?.includes('retry_after_ms')) await aDone.promise;
        return query(...args);
      };
      const bTry = b!.semaphoreAcquire({
        name: NAME,
        holder: 'b',
        permits: PERMITS,
        ttlMs: 60_000,
      });
      const aTry = await a!.semaphoreAcquire({
        name: NAME,
        holder: 'a',
        permits: PERMITS,
        ttlMs: 60_000,
      });
      assert.ok(aTry.acquired, 'A created the slots and took one');
      aDone.resolve();
      const bGot = await bTry;
      assert.ok(
        bGot.acquired,
        `B was refused (retry after ${bGot.acquired ? '' : bGot.retryAfterMs} ms) with two slots free`,
      );
      assert.notEqual(bGot.permit.slot, aTry.permit.slot);
    });
  });

  it('grants exactly `permits` permits when the racers arrive before the slots exist', async () => {
    // The first acquire of a name finds no slot rows; one racer creates them while the others
    // are still between their first try and their look at the slots. Each fresh name repeats
    // that race, and every one must still grant all of its permits at once.
    await withSchema('semaphore race fresh names', async (schema) => {
      const engines = await racers(schema);
      for (let round = 0; round < 15; round++) {
        const name = `fresh-${round}`;
        const gate = deferred();
        const attempts = engines.map(async (engine, i) => {
          await gate.promise;
          return engine.semaphoreAcquire({
            name,
            holder: `racer-${i}`,
            permits: PERMITS,
            ttlMs: 60_000,
          });
        });
        gate.resolve();
        const outcomes = await Promise.all(attempts);
        const winners = outcomes.flatMap((o) => (o.acquired ? [o.permit.slot] : []));
        assert.deepEqual(winners.sort(), [0, 1, 2], `${name}: one permit per slot, all granted`);
      }
    });
  });

  it('never has more than `permits` grants overlapping on the database clock', async () => {
    await withSchema('semaphore race real time', async (schema) => {
      const engines = await racers(schema);
      const grants: { start: number; end: number; token: number }[] = [];
      const GRANTS_PER_RACER = 6;
      let refusals = 0;
      await Promise.all(
        engines.map(async (engine, i) => {
          const holder = `racer-${i}`;
          for (let got = 0; got < GRANTS_PER_RACER;) {
            const result = await engine.semaphoreAcquire({
              name: NAME,
              holder,
              permits: PERMITS,
              ttlMs: 30_000,
            });
            if (!result.acquired) {
              refusals++;
              await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 5));
              continue;
            }
            got++;
            const permit: SemaphorePermit = result.permit;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
            const released = await engine.semaphoreRelease({ ...permit });
            assert.ok(released, 'released within its ttl');
            grants.push({
              start: permit.acquiredAt.getTime(),
              end: released.expiresAt.getTime(),
              token: permit.token,
            });
          }
        }),
      );
      assert.equal(grants.length, RACERS * GRANTS_PER_RACER);
      assert.ok(refusals > 0, 'the racers did contend');
      assert.equal(new Set(grants.map((g) => g.token)).size, grants.length, 'tokens are unique');
      const most = maxOverlap(grants);
      assert.ok(most <= PERMITS, `${most} grants overlapped`);
      // Tokens follow the order of the grants on the database clock.
      const byStart = [...grants].sort((a, b) => a.start - b.start || a.token - b.token);
      for (let k = 1; k < byStart.length; k++)
        assert.ok(
          byStart[k]!.start > byStart[k - 1]!.start || byStart[k]!.token > byStart[k - 1]!.token,
        );
    });
  });

  it('runs at most `permits` waiting acquirers at once through the toolkit, each getting its turns', async () => {
    await withSchema('semaphore race toolkit', async (schema) => {
      const engines = await Promise.all(
        Array.from({ length: RACERS }, () => schema.engine({ poolSize: 1 })),
      );
      let running = 0;
      let most = 0;
      const TURNS = 3;
      const done = Promise.all(
        engines.map(async (engine, i) => {
          const sem = Leasehold.fromEngine(engine).locks.semaphore(NAME, {
            permits: PERMITS,
            pollEvery: '200ms',
          });
          for (let turn = 0; turn < TURNS; turn++) {
            const permit = await sem.acquire({ holder: `worker-${i}`, ttl: '30s', wait: true });
            assert.ok(permit);
            running++;
            most = Math.max(most, running);
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
            running--;
            assert.equal(await permit.release(), true);
          }
        }),
      );
      await within(done, 120_000, 'every worker to get its turns');
      assert.ok(most <= PERMITS, `${most} bodies ran at once`);
      assert.ok(most >= 1);
    });
  });
});
