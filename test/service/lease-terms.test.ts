// GET /api/leases/:resource/terms and GET /api/leaders/:election/terms through inject(), on
// PostgreSQL with its `now` pinned to a ManualClock: terms are made and ended by the engine on
// that clock, so expiry is exact and nothing sleeps (decision 0267).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp } from '../../src/service/app.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { call } from '../support/service.js';

after(closeTestDatabase);

interface TermBody {
  holder: string;
  token: number;
  startedAt: string;
  endedAt: string | null;
  ended: string | null;
  takeover: boolean;
}

const TTL = 10_000;

describe('lease and election term routes', () => {
  it('answers a takeover after an expiry, a released term, bad input with 400, an unknown name with no terms', () =>
    withSchema('http lease terms', async (schema) => {
      const clock = new ManualClock();
      const engine = await schema.engine({ clock });
      const lh = Leasehold.fromEngine(engine);
      const app = await buildApp({ lh });
      try {
        await lh.leases.setTermRecording(true);
        const a = await lh.leases.acquire('jobs/sync', { holder: 'worker-a', ttl: TTL });
        assert.ok(a);
        await clock.advance(TTL + 1);
        const b = await lh.leases.acquire('jobs/sync', { holder: 'worker-b', ttl: TTL });
        assert.ok(b);
        await clock.advance(1_000);
        assert.ok(await lh.leases.release(b));
        const c = await lh.leases.acquire('jobs/sync', { holder: 'worker-a', ttl: TTL });
        assert.ok(c);

        // A resource with a slash travels URL-encoded.
        const answer = await call(app, 'GET', '/api/leases/jobs%2Fsync/terms');
        assert.equal(answer.status, 200);
        assert.equal(answer.body.resource, 'jobs/sync');
        assert.equal(answer.body.recording, true);
        const terms = answer.body.terms as TermBody[];
        assert.deepEqual(
          terms.map((t) => [t.holder, t.token, t.ended, t.takeover]),
          [
            ['worker-a', c.token, null, false],
            ['worker-b', b.token, 'released', true],
            ['worker-a', a.token, 'expired', false],
          ],
        );
        // worker-b's term followed worker-a's expiry: a takeover; worker-a's second term
        // followed a release, which is none.
        assert.equal(terms[2]!.endedAt, a.expiresAt.toISOString());
        assert.equal(terms[0]!.endedAt, null);
        const limited = (await call(app, 'GET', '/api/leases/jobs%2Fsync/terms?limit=2')).body
          .terms as TermBody[];
        assert.deepEqual(
          limited.map((t) => t.token),
          [c.token, b.token],
        );

        assert.deepEqual((await call(app, 'GET', '/api/leases/nobody/terms')).body, {
          resource: 'nobody',
          recording: true,
          terms: [],
        });
        for (const url of [
          '/api/leases/jobs%2Fsync/terms?limit=0',
          '/api/leases/jobs%2Fsync/terms?limit=1000',
          '/api/leases/jobs%2Fsync/terms?offset=3',
          '/api/leases/a%01b/terms',
          '/api/leaders/primary/terms?limit=x',
        ]) {
          const refused = await call(app, 'GET', url);
          assert.equal(refused.status, 400, url);
          assert.equal(refused.body.error?.code, 'invalid_argument', url);
        }
      } finally {
        await app.close();
        await lh.close();
      }
    }));

  it("answers an election's terms with the takeover marked", () =>
    withSchema('http election terms', async (schema) => {
      const clock = new ManualClock();
      const engine = await schema.engine({ clock });
      const lh = Leasehold.fromEngine(engine);
      const app = await buildApp({ lh });
      try {
        const name = 'leasehold:election:primary';
        const first = await engine.leaseLockAcquire({ name, holder: 'node-1', ttlMs: TTL });
        assert.ok(first.acquired);
        await clock.advance(TTL + 1);
        const second = await engine.leaseLockAcquire({ name, holder: 'node-2', ttlMs: TTL });
        assert.ok(second.acquired);
        const answer = await call(app, 'GET', '/api/leaders/primary/terms');
        assert.equal(answer.status, 200);
        assert.deepEqual(
          (answer.body.terms as TermBody[]).map((t) => [t.holder, t.token, t.ended, t.takeover]),
          [
            ['node-2', second.lease.token, null, true],
            ['node-1', first.lease.token, 'expired', false],
          ],
        );
        assert.deepEqual((await call(app, 'GET', '/api/leaders/nobody/terms')).body, {
          election: 'nobody',
          terms: [],
        });
      } finally {
        await app.close();
        await lh.close();
      }
    }));
});
