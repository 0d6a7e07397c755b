/**
 * Twenty acquirers on twenty connections race for one resource, round after round. Whatever
 * the interleaving, the single INSERT … ON CONFLICT must give each round to exactly one of
 * them, and each new term's token must be higher than the last: the two halves of the lease
 * contract that only real concurrency on a real database can prove.
 *
 * Expiry in real time has one honest caveat. If a round lasts longer than the ttl (a 2-core
 * machine running the whole suite stalled a round for 149 ms against a 50 ms ttl), a racer
 * whose statement starts after the winner's lease expired rightly takes it over: that is a
 * second term, not a double grant. So the real-time variant asserts the invariant itself (no
 * two terms overlap on the database clock, tokens rise by one per term), and a variant with
 * the database clock pinned and frozen during each round asserts exactly one winner per round.
 */
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { Lease } from '../../src/core/types.js';
import type { LeaseAcquireResult } from '../../src/engine/engine.js';
import type {
  PostgresEngine,
  PostgresEngineOptions,
} from '../../src/engine/postgres/postgres-engine.js';
import { closeTestDatabase, withSchema, type SchemaContext } from '../support/database.js';
import { deferred, waitFor } from '../support/wait.js';

const RACERS = 20;
const ROUNDS = 30;
const RESOURCE = 'contended';

after(closeTestDatabase);

interface Outcome {
  readonly holder: string;
  readonly result: LeaseAcquireResult;
}

interface Round {
  /** The terms this round started, in token order (one, unless the round outlived the ttl). */
  readonly winners: Lease[];
  readonly outcomes: Outcome[];
  /** From opening the gate to the last racer's answer. */
  readonly elapsedMs: number;
}

/** One engine per racer, each with a pool of one: twenty connections, twenty backends. */
async function racers(
  schema: SchemaContext,
  options: Pick<PostgresEngineOptions, 'clock'> = {},
): Promise<PostgresEngine[]> {
  const engines = await Promise.all(
    Array.from({ length: RACERS }, () => schema.engine({ ...options, poolSize: 1 })),
  );
  const pids = await Promise.all(
    engines.map(async (e) => (await e.pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid),
  );
  assert.equal(new Set(pids).size, RACERS, 'every racer has a backend of its own');
  // Prepare the statements on every connection first, so round one races like the others.
  await Promise.all(
    engines.map(async (engine, i) => {
      await engine.leaseAcquire({ resource: `warm-up-${i}`, holder: 'warm-up', ttlMs: 60_000 });
      await engine.leaseGet({ resource: `warm-up-${i}` });
    }),
  );
  return engines;
}

/** Opens a gate that all racers wait behind, so their acquires leave together. */
async function race(engines: PostgresEngine[], ttlMs: number): Promise<Round> {
  const gate = deferred();
  const attempts = engines.map(async (engine, i): Promise<Outcome> => {
    const holder = `racer-${i}`;
    await gate.promise;
    return { holder, result: await engine.leaseAcquire({ resource: RESOURCE, holder, ttlMs }) };
  });
  const opened = performance.now();
  gate.resolve();
  const outcomes = await Promise.all(attempts);
  const elapsedMs = performance.now() - opened;
  const winners = outcomes
    .flatMap(({ holder, result }) => {
      if (!result.acquired) return [];
      assert.equal(result.lease.holder, holder);
      return [result.lease];
    })
    .sort((a, b) => a.token - b.token);
  return { winners, outcomes, elapsedMs };
}

/** The strict outcome: one winner, and every loser was refused by that winner's term. */
function assertOneWinner(round: Round, index: number, ttlMs: number): Lease {
  assert.equal(
    round.winners.length,
    1,
    `round ${index}: winners ${round.winners.map((w) => w.holder).join(', ') || 'none'} ` +
      `(the round took ${round.elapsedMs.toFixed(1)} ms, the ttl is ${ttlMs} ms)`,
  );
  const winner = round.winners[0]!;
  for (const { holder, result } of round.outcomes) {
    if (result.acquired) continue;
    assert.equal(result.current?.holder, winner.holder, `round ${index}: ${holder} refused`);
    assert.equal(result.current?.token, winner.token);
  }
  return winner;
}

/**
 * The invariant behind "one winner": terms follow each other without overlapping on the
 * database clock, each with the previous token plus one (none skipped, none reused).
 */
function assertTermsNeverOverlap(terms: Lease[]): void {
  terms.forEach((term, i) => {
    assert.equal(term.token, i + 1, `term ${i} has token ${term.token}`);
    const previous = terms[i - 1];
    if (previous) {
      assert.ok(
        term.acquiredAt.getTime() >= previous.expiresAt.getTime(),
        `token ${term.token} (${term.holder}) began at ${term.acquiredAt.toISOString()}, ` +
          `before token ${previous.token} (${previous.holder}) expired at ${previous.expiresAt.toISOString()}`,
      );
    }
  });
}

function report(t: TestContext, rounds: Round[]): void {
  const terms = rounds.flatMap((r) => r.winners);
  const slowest = Math.max(...rounds.map((r) => r.elapsedMs));
  const single = rounds.filter((r) => r.winners.length === 1).length;
  t.diagnostic(
    `${rounds.length} rounds of ${RACERS} racers; ${single} rounds with a single winner; ` +
      `${new Set(terms.map((w) => w.holder)).size} distinct winners; ` +
      `slowest round ${slowest.toFixed(1)} ms; final token ${terms.at(-1)?.token}`,
  );
}

describe('a race of twenty acquirers on twenty connections', () => {
  it('gives every round to exactly one racer, with rising tokens, when each winner releases', async (t) => {
    await withSchema('lease race with release', async (schema) => {
      const engines = await racers(schema);
      const rounds: Round[] = [];
      const terms: Lease[] = []; // as released: the release pulled each expiry forward
      for (let i = 0; i < ROUNDS; i++) {
        const round = await race(engines, 10_000);
        rounds.push(round);
        const winner = assertOneWinner(round, i, 10_000);
        const engine = engines[Number(winner.holder.slice('racer-'.length))]!;
        const released = await engine.leaseRelease({
          resource: RESOURCE,
          holder: winner.holder,
          token: winner.token,
        });
        assert.equal(released?.state, 'released');
        terms.push(released!);
      }
      assertTermsNeverOverlap(terms);
      report(t, rounds);
    });
  });

  it('hands a 50 ms lease that expires in real time to one new term at a time, with rising tokens', async (t) => {
    const ttlMs = 50;
    await withSchema('lease race with expiry', async (schema) => {
      const engines = await racers(schema);
      const observer = engines[0]!;
      const rounds: Round[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const round = await race(engines, ttlMs);
        rounds.push(round);
        assert.ok(round.winners.length >= 1, `round ${i}: nobody took the expired lease`);
        const newest = round.winners.at(-1)!;
        for (const { holder, result } of round.outcomes) {
          if (result.acquired) continue;
          const refusedBy = result.current?.token;
          assert.ok(
            round.winners.some((w) => w.token === refusedBy),
            `round ${i}: ${holder} was refused by token ${refusedBy}, not by a term of this round`,
          );
        }
        // Nobody releases: the next round starts once the database clock says it expired.
        await waitFor(`round ${i}'s lease to expire`, async () => {
          const lease = await observer.leaseGet({ resource: RESOURCE });
          return lease?.token === newest.token && lease.state === 'expired';
        });
      }
      assertTermsNeverOverlap(rounds.flatMap((r) => r.winners));
      const last = await observer.leaseGet({ resource: RESOURCE });
      assert.equal(last?.releasedAt, null, 'no lease was ever released');
      report(t, rounds);
    });
  });

  it('gives every round to exactly one racer, with rising tokens, when each winner lets its lease expire on a pinned clock', async (t) => {
    const ttlMs = 50;
    await withSchema('lease race with pinned expiry', async (schema) => {
      // Every racer's `now` is this clock: frozen while a round runs, moved past the expiry
      // between rounds, so however slow a round is, the winner's lease cannot lapse during it.
      const clock = new ManualClock();
      const engines = await racers(schema, { clock });
      const observer = engines[0]!;
      const rounds: Round[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const round = await race(engines, ttlMs);
        rounds.push(round);
        const winner = assertOneWinner(round, i, ttlMs);
        await clock.advance(ttlMs - 1);
        assert.equal((await observer.leaseGet({ resource: RESOURCE }))?.state, 'active');
        await clock.advance(1);
        const lease = await observer.leaseGet({ resource: RESOURCE });
        assert.equal(lease?.token, winner.token);
        assert.equal(lease?.state, 'expired');
      }
      assertTermsNeverOverlap(rounds.flatMap((r) => r.winners));
      report(t, rounds);
    });
  });
});
