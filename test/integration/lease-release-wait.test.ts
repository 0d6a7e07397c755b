/**
 * A term starts no earlier than the release it follows, on the database clock. An acquire's
 * `now()` is its transaction's start, so an acquire that waited on the row lock of a concurrent
 * release used to record an acquired_at before that release's released_at: the two terms
 * appeared to overlap by the wait (the chaos run's overlap checker saw 1-2 ms). Here the
 * release runs in an open transaction with a later time than the acquire that waits behind it.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

describe('an acquire that waited for a concurrent release', () => {
  it('starts its term at the release, not before it', () =>
    withSchema('lease release wait', async (schema) => {
      const clock = new ManualClock();
      // Three connections: the open release, the waiting acquire, and the look at pg_stat_activity.
      const engine = await schema.engine({ clock, poolSize: 3 });
      const first = await engine.leaseAcquire({ resource: 'r', holder: 'a', ttlMs: 60_000 });
      assert.ok(first.acquired);

      const acquireStartsAt = new Date(clock.now().getTime() + 1_000);
      const releasedAt = new Date(acquireStartsAt.getTime() + 10);
      const releasing = await engine.pool.connect();
      try {
        await releasing.query('BEGIN');
        await releasing.query(
          `UPDATE "${schema.schema}".leases SET released_at = $2, expires_at = least(expires_at, $2)
           WHERE resource = $1`,
          ['r', releasedAt],
        );
        await clock.advance(1_000); // the acquire's clock reads acquireStartsAt
        const waiting = engine.leaseAcquire({ resource: 'r', holder: 'b', ttlMs: 60_000 });
        await waitFor('the acquire waiting on the released row', async () => {
          const { rows } = await engine.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE $1`,
            [`%INSERT INTO "${schema.schema}".leases%`],
          );
          return rows[0]!.n > 0;
        });
        await releasing.query('COMMIT');
        const second = await waiting;
        assert.ok(second.acquired, 'the released lease was taken');
        assert.equal(second.lease.token, 2);
        assert.equal(
          second.lease.acquiredAt.getTime(),
          releasedAt.getTime(),
          'the term begins when the previous one was released',
        );
      } finally {
        releasing.release();
      }
    }));
});
