import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { InvalidArgumentError } from '../../../src/core/errors.js';
import { Maintainer } from '../../../src/queue/maintenance/maintainer.js';
import { conformanceCase, type EngineHarness } from '../harness.js';

const TTL = 10_000;

/** The history of lease and lease-lock terms (decision 0267), on the pinned clock. */
export function leaseTermEngineCases(h: EngineHarness): void {
  describe(`[${h.name}] engine: lease terms`, () => {
    conformanceCase(
      h,
      'terms: a released term is recorded released at its release',
      async ({ engine, clock, lh }) => {
        await engine.leaseTermRecordingSet({ enabled: true });
        const a = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(a.acquired);
        await clock.advance(2_000);
        const releasedAt = clock.now();
        assert.ok(await engine.leaseRelease({ resource: 'r', holder: 'a', token: a.lease.token }));
        // Release writes nothing to the history: the row shows it until the next acquire.
        assert.deepEqual(
          await engine.leaseTermList({ kind: 'lease', resource: 'r', limit: 10 }),
          [],
        );
        await clock.advance(1_000);
        const b = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        assert.ok(b.acquired);

        const recorded = await engine.leaseTermList({ kind: 'lease', resource: 'r', limit: 10 });
        assert.deepEqual(recorded, [
          {
            holder: 'a',
            token: a.lease.token,
            startedAt: a.lease.acquiredAt,
            endedAt: releasedAt,
            ended: 'released',
          },
        ]);
        const terms = await lh.leases.terms('r');
        assert.deepEqual(
          terms.map((t) => [t.holder, t.token, t.ended, t.takeover]),
          [
            ['b', b.lease.token, null, false],
            ['a', a.lease.token, 'released', false],
          ],
        );
        assert.equal(terms[0]!.endedAt, null);
      },
    );

    conformanceCase(
      h,
      'terms: expiry then takeover by another holder',
      async ({ engine, clock, lh }) => {
        await engine.leaseTermRecordingSet({ enabled: true });
        const a = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(a.acquired);
        await clock.advance(TTL + 500);
        // Expired but not yet taken over: the row is the newest term, ended `expired`.
        const before = await lh.leases.terms('r');
        assert.deepEqual(
          before.map((t) => [t.holder, t.ended, t.endedAt?.getTime()]),
          [['a', 'expired', a.lease.expiresAt.getTime()]],
        );
        const b = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        assert.ok(b.acquired);
        const terms = await lh.leases.terms('r');
        assert.deepEqual(
          terms.map((t) => [t.holder, t.token, t.ended, t.takeover]),
          [
            ['b', b.lease.token, null, true],
            ['a', a.lease.token, 'expired', false],
          ],
        );
        assert.equal(terms[1]!.endedAt!.getTime(), a.lease.expiresAt.getTime());
        assert.equal(terms[1]!.startedAt.getTime(), a.lease.acquiredAt.getTime());
      },
    );

    conformanceCase(h, 'terms: the same holder re-acquiring', async ({ engine, clock, lh }) => {
      await engine.leaseTermRecordingSet({ enabled: true });
      const first = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
      await clock.advance(1_000);
      // Live: the same term goes on (same token), nothing is recorded.
      await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
      assert.deepEqual(await engine.leaseTermList({ kind: 'lease', resource: 'r', limit: 10 }), []);
      await clock.advance(TTL + 1);
      const again = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
      assert.ok(first.acquired && again.acquired);
      assert.ok(again.lease.token > first.lease.token);
      const terms = await lh.leases.terms('r');
      assert.deepEqual(
        terms.map((t) => [t.holder, t.token, t.ended, t.takeover]),
        [
          ['a', again.lease.token, null, false],
          ['a', first.lease.token, 'expired', false],
        ],
        'an expired term followed by its own holder is no takeover',
      );
    });

    conformanceCase(
      h,
      'terms: a renew refused after another holder took over marks the term superseded',
      async ({ engine, clock, lh }) => {
        await engine.leaseTermRecordingSet({ enabled: true });
        const a = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(a.acquired);
        await clock.advance(TTL + 1);
        const b = await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        assert.ok(b.acquired);
        // a comes back from a pause and tries to renew its old term.
        const refused = await engine.leaseRenew({
          resource: 'r',
          holder: 'a',
          token: a.lease.token,
          ttlMs: TTL,
        });
        assert.equal(refused, null);
        const terms = await lh.leases.terms('r');
        assert.deepEqual(
          terms.map((t) => [t.holder, t.ended, t.takeover]),
          [
            ['b', null, true],
            ['a', 'superseded', false],
          ],
        );
        // b's own refused renew with a wrong token marks nothing (its term is live).
        await engine.leaseRenew({ resource: 'r', holder: 'b', token: 999_999, ttlMs: TTL });
        assert.equal((await lh.leases.terms('r'))[0]!.ended, null);
      },
    );

    conformanceCase(
      h,
      'terms: a refused renew of a term its own holder followed stays expired',
      async ({ engine, clock, lh }) => {
        await engine.leaseTermRecordingSet({ enabled: true });
        const a = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        assert.ok(a.acquired);
        await clock.advance(TTL + 1);
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await engine.leaseRenewMany([
          { resource: 'r', holder: 'a', token: a.lease.token, ttlMs: TTL },
        ]);
        assert.equal((await lh.leases.terms('r'))[1]!.ended, 'expired');
      },
    );

    conformanceCase(
      h,
      'terms: lease locks (elections) keep their own history',
      async ({ engine, clock, lh }) => {
        const name = 'leasehold:election:primary';
        const a = await engine.leaseLockAcquire({ name, holder: 'node-a', ttlMs: TTL });
        assert.ok(a.acquired);
        // A lease of the same name is another history.
        await engine.leaseAcquire({ resource: name, holder: 'x', ttlMs: 1 });
        await clock.advance(TTL + 1);
        const b = await engine.leaseLockAcquire({ name, holder: 'node-b', ttlMs: TTL });
        assert.ok(b.acquired);
        const refused = await engine.leaseLockRenew({
          name,
          holder: 'node-a',
          token: a.lease.token,
          ttlMs: TTL,
        });
        assert.equal(refused, null);
        const terms = await lh.locks.electionTerms('primary');
        assert.deepEqual(
          terms.map((t) => [t.holder, t.token, t.ended, t.takeover]),
          [
            ['node-b', b.lease.token, null, true],
            ['node-a', a.lease.token, 'superseded', false],
          ],
        );
        assert.deepEqual(await lh.locks.leaseLockTerms(name), terms);
        assert.deepEqual(
          (await lh.leases.terms(name)).map((t) => t.holder),
          ['x'],
        );
      },
    );

    conformanceCase(
      h,
      'terms: lease recording is off until turned on; lease locks always record',
      async ({ engine, clock, lh }) => {
        assert.equal(await lh.leases.termRecording(), false);
        await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: TTL });
        await engine.leaseLockAcquire({ name: 'l', holder: 'a', ttlMs: TTL });
        await clock.advance(TTL + 1);
        await engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: TTL });
        await engine.leaseLockAcquire({ name: 'l', holder: 'b', ttlMs: TTL });
        assert.deepEqual(
          await engine.leaseTermList({ kind: 'lease', resource: 'r', limit: 9 }),
          [],
        );
        assert.equal(
          (await engine.leaseTermList({ kind: 'lock', resource: 'l', limit: 9 })).length,
          1,
        );
        // Off, the timeline is the current term alone.
        assert.deepEqual(
          (await lh.leases.terms('r')).map((t) => t.holder),
          ['b'],
        );
        await lh.leases.setTermRecording(true);
        assert.equal(await lh.leases.termRecording(), true);
        await clock.advance(TTL + 1);
        await engine.leaseAcquire({ resource: 'r', holder: 'c', ttlMs: TTL });
        assert.deepEqual(
          (await lh.leases.terms('r')).map((t) => [t.holder, t.ended, t.takeover]),
          [
            ['c', null, true],
            ['b', 'expired', false],
          ],
        );
        await lh.leases.setTermRecording(false);
        assert.equal(await lh.leases.termRecording(), false);
        await assert.rejects(
          lh.leases.setTermRecording('yes' as unknown as boolean),
          (e) => e instanceof InvalidArgumentError && e.field === 'enabled',
        );
        assert.equal(await lh.leases.termRecording(), false, 'bad input changes nothing');
      },
    );

    conformanceCase(
      h,
      'terms: the maintainer prunes terms beyond the per-resource bound, and refuses a bad bound',
      async ({ engine, clock }) => {
        const name = 'leasehold:election:pruned';
        for (let i = 0; i < 4; i++) {
          const held = await engine.leaseLockAcquire({ name, holder: `n${i}`, ttlMs: TTL });
          assert.ok(held.acquired);
          await clock.advance(TTL + 1);
        }
        assert.throws(
          () => new Maintainer(engine, { clock, termsPerResource: 0 }),
          (e) => e instanceof InvalidArgumentError && e.field === 'termsPerResource',
        );
        const maintainer = new Maintainer(engine, { clock, termsPerResource: 1, batchSize: 1 });
        const cycle = await maintainer.runOnce();
        assert.equal(cycle['prune-terms'], 2, 'in batches of one, all that were due');
        assert.deepEqual(
          (await engine.leaseTermList({ kind: 'lock', resource: name, limit: 9 })).map(
            (t) => t.holder,
          ),
          ['n2'],
        );
        await maintainer.stop();
      },
    );

    conformanceCase(
      h,
      'terms: an unknown resource has none; bad input is refused',
      async ({ lh }) => {
        assert.deepEqual(await lh.leases.terms('never-held'), []);
        assert.deepEqual(await lh.locks.electionTerms('never-held'), []);
        await assert.rejects(
          lh.leases.terms(''),
          (e) => e instanceof InvalidArgumentError && e.field === 'resource',
        );
        await assert.rejects(
          lh.leases.terms('r', { limit: 0 }),
          (e) => e instanceof InvalidArgumentError && e.field === 'limit',
        );
        await assert.rejects(
          lh.leases.terms('r', { limit: 10_000 }),
          (e) => e instanceof InvalidArgumentError && e.field === 'limit',
        );
      },
    );

    conformanceCase(
      h,
      'terms: the limit counts the current term; newest first',
      async ({ engine, clock, lh }) => {
        await engine.leaseTermRecordingSet({ enabled: true });
        for (let i = 0; i < 5; i++) {
          const held = await engine.leaseAcquire({ resource: 'r', holder: `h${i}`, ttlMs: TTL });
          assert.ok(held.acquired);
          await clock.advance(1_000);
          await engine.leaseRelease({ resource: 'r', holder: `h${i}`, token: held.lease.token });
        }
        const terms = await lh.leases.terms('r', { limit: 3 });
        assert.deepEqual(
          terms.map((t) => [t.holder, t.ended]),
          [
            ['h4', 'released'],
            ['h3', 'released'],
            ['h2', 'released'],
          ],
        );
      },
    );

    conformanceCase(
      h,
      'terms: pruning keeps the newest per resource and drops the old',
      async ({ engine, clock }) => {
        await engine.leaseTermRecordingSet({ enabled: true });
        for (let i = 0; i < 4; i++) {
          const held = await engine.leaseAcquire({ resource: 'r', holder: `h${i}`, ttlMs: TTL });
          assert.ok(held.acquired);
          await engine.leaseRelease({ resource: 'r', holder: `h${i}`, token: held.lease.token });
          await clock.advance(1_000);
        }
        await engine.leaseAcquire({ resource: 'r', holder: 'last', ttlMs: TTL });
        assert.equal(
          (await engine.leaseTermList({ kind: 'lease', resource: 'r', limit: 10 })).length,
          4,
        );
        const keep = { olderThanMs: 3_600_000, keepPerResource: 2, limit: 100 };
        assert.equal(await engine.leaseTermPrune(keep), 2);
        assert.deepEqual(
          (await engine.leaseTermList({ kind: 'lease', resource: 'r', limit: 10 })).map(
            (t) => t.holder,
          ),
          ['h3', 'h2'],
        );
        assert.equal(await engine.leaseTermPrune(keep), 0);
        // h2's term ended 2 s before h3's: a cutoff between them drops h2 alone.
        await clock.advance(3_600_000 - 1_500);
        assert.equal(await engine.leaseTermPrune({ ...keep, keepPerResource: 100 }), 1);
        assert.deepEqual(
          (await engine.leaseTermList({ kind: 'lease', resource: 'r', limit: 10 })).map(
            (t) => t.holder,
          ),
          ['h3'],
        );
      },
    );
  });
}
