/**
 * Model-based property test of the lease family. fast-check generates random sequences of
 * acquire, renew, release and clock advances over a few resources and holders; each sequence
 * runs against an engine on a ManualClock and against the pure model below, and after every
 * command the two must agree on the answer and on the state of every resource.
 *
 * The model is the specification written as plainly as possible: a Map from resource to
 * { holder, token, times }. The memory engine runs many sequences; PostgreSQL (its `now` pinned
 * to the ManualClock) runs the first few of the very same sequences (same seed, same arbitrary).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../src/core/clock.js';
import type { FencingToken, Lease, LeaseState } from '../../src/core/types.js';
import type { Engine } from '../../src/engine/engine.js';
import { MemoryEngine } from '../../src/engine/memory/memory-engine.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const RESOURCES = ['r1', 'r2', 'r3'] as const;
const HOLDERS = ['alice', 'bob', 'carol'] as const;
// Few distinct values, so expiry instants and advances line up exactly and often.
const TTLS = [100, 1_000, 2_500, 10_000] as const;
const ADVANCES = [1, 99, 100, 250, 1_000, 2_500] as const;
/** Renew and release use the resource's current token shifted by this: mostly right, sometimes stale. */
const TOKEN_OFFSETS = [0, 0, 0, 0, -1, 1] as const;
/** Renew and release come from the current holder (null) three times in four, else from anyone. */
const presentingHolder = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom<string>(...HOLDERS) },
);

const MAX_COMMANDS = 25;
const SEED = Number(process.env.LEASEHOLD_PROPERTY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MEMORY_RUNS = 500;
const POSTGRES_RUNS = 50;

type Command =
  | { kind: 'acquire'; resource: string; holder: string; ttlMs: number }
  | { kind: 'renew'; resource: string; as: string | null; tokenOffset: number; ttlMs: number }
  | { kind: 'release'; resource: string; as: string | null; tokenOffset: number }
  | { kind: 'advance'; ms: number };

const resource = fc.constantFrom(...RESOURCES);
const holder = fc.constantFrom(...HOLDERS);
const ttlMs = fc.constantFrom(...TTLS);
const tokenOffset = fc.constantFrom(...TOKEN_OFFSETS);

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('acquire' as const), resource, holder, ttlMs }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('renew' as const),
      resource,
      as: presentingHolder,
      tokenOffset,
      ttlMs,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      resource,
      as: presentingHolder,
      tokenOffset,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.constantFrom(...ADVANCES),
    }),
  },
);

// size 'max': lengths spread over the whole range instead of fast-check's default of short arrays.
const commands = fc.array(command, { minLength: 1, maxLength: MAX_COMMANDS, size: 'max' });

/** What both sides are compared on; times are ms since the sequence started. */
interface LeaseView {
  readonly holder: string;
  readonly token: FencingToken;
  readonly state: LeaseState;
  readonly acquiredAt: number;
  readonly expiresAt: number;
  readonly releasedAt: number | null;
  readonly renewCount: number;
}

type Answer =
  | { readonly acquired: boolean; readonly lease: LeaseView | null }
  | { readonly lease: LeaseView | null }
  | null;

interface ModelLease {
  holder: string;
  token: FencingToken;
  acquiredAt: number;
  expiresAt: number;
  releasedAt: number | null;
  renewCount: number;
}

/** The reference: every rule of DESIGN.md §4 and engine.ts, in the fewest possible lines. */
class LeaseModel {
  now = 0;
  readonly leases = new Map<string, ModelLease>();

  private live(l: ModelLease): boolean {
    return l.releasedAt === null && l.expiresAt > this.now;
  }

  /** Who renews or releases: the named holder, or (null) the resource's current holder. */
  presentingHolder(resource: string, as: string | null): string {
    return as ?? this.leases.get(resource)?.holder ?? HOLDERS[0];
  }

  /** The token a renew or release presents: the current one, shifted, never below 1. */
  presentedToken(resource: string, offset: number): FencingToken {
    return Math.max(1, (this.leases.get(resource)?.token ?? 1) + offset);
  }

  view(resource: string): LeaseView | null {
    const l = this.leases.get(resource);
    if (!l) return null;
    const state = l.releasedAt !== null ? 'released' : this.live(l) ? 'active' : 'expired';
    return { ...l, state };
  }

  acquire(resource: string, holder: string, ttlMs: number): Answer {
    const l = this.leases.get(resource);
    if (!l) {
      this.leases.set(resource, {
        holder,
        token: 1,
        acquiredAt: this.now,
        expiresAt: this.now + ttlMs,
        releasedAt: null,
        renewCount: 0,
      });
    } else if (this.live(l) && l.holder === holder) {
      // The live holder again: same term, extended.
      l.expiresAt = this.now + ttlMs;
      l.renewCount++;
    } else if (this.live(l)) {
      return { acquired: false, lease: this.view(resource) };
    } else {
      // Free again (expired or released): a new term with the next token.
      Object.assign(l, {
        holder,
        token: l.token + 1,
        acquiredAt: this.now,
        expiresAt: this.now + ttlMs,
        releasedAt: null,
        renewCount: 0,
      });
    }
    return { acquired: true, lease: this.view(resource) };
  }

  renew(resource: string, holder: string, token: FencingToken, ttlMs: number): Answer {
    const l = this.owned(resource, holder, token);
    if (!l) return { lease: null };
    l.expiresAt = this.now + ttlMs;
    l.renewCount++;
    return { lease: this.view(resource) };
  }

  release(resource: string, holder: string, token: FencingToken): Answer {
    const l = this.owned(resource, holder, token);
    if (!l) return { lease: null };
    l.releasedAt = this.now;
    l.expiresAt = this.now;
    return { lease: this.view(resource) };
  }

  private owned(resource: string, holder: string, token: FencingToken): ModelLease | undefined {
    const l = this.leases.get(resource);
    return l && this.live(l) && l.holder === holder && l.token === token ? l : undefined;
  }
}

/** One sequence's view of an engine: its resources carry a prefix so runs can share a schema. */
interface Subject {
  readonly engine: Engine;
  readonly clock: ManualClock;
  readonly prefix: string;
  readonly tally: Tally;
}

function toView(lease: Lease | null, origin: number): LeaseView | null {
  if (!lease) return null;
  return {
    holder: lease.holder,
    token: lease.token,
    state: lease.state,
    acquiredAt: lease.acquiredAt.getTime() - origin,
    expiresAt: lease.expiresAt.getTime() - origin,
    releasedAt: lease.releasedAt === null ? null : lease.releasedAt.getTime() - origin,
    renewCount: lease.renewCount,
  };
}

/** Commands run, by kind and outcome: shows in the diagnostics what the property exercised. */
class Tally {
  private readonly counts = new Map<string, number>();
  count(cmd: Command, answer: Answer): void {
    const outcome =
      answer === null
        ? ''
        : 'acquired' in answer
          ? answer.acquired
            ? ' taken'
            : ' refused'
          : answer.lease
            ? ' ok'
            : ' refused';
    const key = cmd.kind + outcome;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  toString(): string {
    return [...this.counts].map(([k, n]) => `${n} ${k}`).join(', ');
  }
}

async function runSequence(subject: Subject, sequence: Command[]): Promise<void> {
  const { engine, clock, prefix } = subject;
  const origin = clock.now().getTime();
  const model = new LeaseModel();
  const name = (r: string): string => prefix + r;
  const steps: string[] = [];

  for (const cmd of sequence) {
    let expected: Answer = null;
    let actual: Answer = null;
    switch (cmd.kind) {
      case 'acquire': {
        expected = model.acquire(cmd.resource, cmd.holder, cmd.ttlMs);
        const result = await engine.leaseAcquire({
          resource: name(cmd.resource),
          holder: cmd.holder,
          ttlMs: cmd.ttlMs,
        });
        actual = result.acquired
          ? { acquired: true, lease: toView(result.lease, origin) }
          : { acquired: false, lease: toView(result.current, origin) };
        break;
      }
      case 'renew': {
        const holder = model.presentingHolder(cmd.resource, cmd.as);
        const token = model.presentedToken(cmd.resource, cmd.tokenOffset);
        expected = model.renew(cmd.resource, holder, token, cmd.ttlMs);
        const lease = await engine.leaseRenew({
          resource: name(cmd.resource),
          holder,
          token,
          ttlMs: cmd.ttlMs,
        });
        actual = { lease: toView(lease, origin) };
        break;
      }
      case 'release': {
        const holder = model.presentingHolder(cmd.resource, cmd.as);
        const token = model.presentedToken(cmd.resource, cmd.tokenOffset);
        expected = model.release(cmd.resource, holder, token);
        const lease = await engine.leaseRelease({
          resource: name(cmd.resource),
          holder,
          token,
        });
        actual = { lease: toView(lease, origin) };
        break;
      }
      case 'advance':
        model.now += cmd.ms;
        await clock.advance(cmd.ms);
        break;
    }
    subject.tally.count(cmd, expected);
    steps.push(`${steps.length}: ${JSON.stringify(cmd)} at t=${model.now}`);
    const where = `after\n  ${steps.join('\n  ')}`;
    assert.deepEqual(actual, expected, `answer ${where}`);
    for (const r of RESOURCES) {
      const stored = toView(await engine.leaseGet({ resource: name(r) }), origin);
      assert.deepEqual(stored, model.view(r), `state of ${r} ${where}`);
    }
  }

  // The list filters agree with the model too (each run's resources share the prefix).
  const listed = async (filter: 'active' | 'expired' | 'released' | 'renewed'): Promise<string[]> =>
    (await engine.leaseList({ filter, limit: 100, offset: 0, resourcePrefix: prefix }))
      .map((l) => l.resource.slice(prefix.length))
      .sort();
  const modelled = (keep: (v: LeaseView) => boolean): string[] =>
    RESOURCES.filter((r) => {
      const v = model.view(r);
      return v !== null && keep(v);
    });
  assert.deepEqual(
    await listed('active'),
    modelled((v) => v.state === 'active'),
  );
  assert.deepEqual(
    await listed('expired'),
    modelled((v) => v.state === 'expired'),
  );
  assert.deepEqual(
    await listed('released'),
    modelled((v) => v.state === 'released'),
  );
  assert.deepEqual(
    await listed('renewed'),
    modelled((v) => v.renewCount > 0),
  );
}

describe('the lease engines against a reference model', () => {
  it(`agrees with the model on ${MEMORY_RUNS} random sequences on the memory engine`, async (t) => {
    t.diagnostic(`seed ${SEED} (set LEASEHOLD_PROPERTY_SEED to replay)`);
    const tally = new Tally();
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        const clock = new ManualClock();
        const engine = new MemoryEngine({ clock });
        try {
          await runSequence({ engine, clock, prefix: '', tally }, sequence);
        } finally {
          await engine.close();
        }
      }),
      { seed: SEED, numRuns: MEMORY_RUNS },
    );
    t.diagnostic(`commands: ${tally}`);
  });

  it(`agrees with the model on the first ${POSTGRES_RUNS} of the same sequences on PostgreSQL with its clock pinned`, async (t) => {
    t.diagnostic(`seed ${SEED} (set LEASEHOLD_PROPERTY_SEED to replay)`);
    await withSchema('lease model property', async (schema) => {
      // One engine for every run, pinned to one ManualClock that only moves forward; each run
      // measures time from its own start and uses resources of its own.
      const clock = new ManualClock();
      const engine = await schema.engine({ clock, poolSize: 1 });
      const tally = new Tally();
      let run = 0;
      await fc.assert(
        fc.asyncProperty(commands, async (sequence) => {
          await runSequence({ engine, clock, prefix: `run${run++}/`, tally }, sequence);
        }),
        { seed: SEED, numRuns: POSTGRES_RUNS },
      );
      t.diagnostic(`${run} sequences; commands: ${tally}`);
    });
  });
});
