/**
 * A session lock holds its row lock in a transaction that stays open on a dedicated connection.
 * When that connection dies (here: its backend is terminated, as a crash, a failover or a
 * network cut would end it), PostgreSQL rolls the transaction back and frees the lock. Two
 * things must then hold, and only a real server can show them:
 * - the holder is told at once: its signal fires with `lease_lost`;
 * - the next holder's fencing token is higher. The token comes from a sequence, which a
 *   rollback does not rewind; a token written inside the holding transaction would have been
 *   rolled back with it and handed out again, giving two holders the same token.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isLeaseholdError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { waitFor, within } from '../support/wait.js';

after(closeTestDatabase);

describe('session lock: dropped connection', () => {
  it('fires the holder signal when its backend is terminated, and the next holder gets a higher token', () =>
    withSchema('session lock drop', async (schema) => {
      // Two engines: the holder's process and another process waiting for the same lock.
      const holderSide = Leasehold.fromEngine(await schema.engine());
      const otherEngine = await schema.engine();
      const otherSide = Leasehold.fromEngine(otherEngine);
      const holder = holderSide.locks.session('nightly-report');
      const token = await holder.lock();
      const pid = holder.backendPid;
      assert.ok(pid, 'the term is held by a backend of its own');
      const [activity] = (
        await otherEngine.pool.query<{ state: string }>(
          'SELECT state FROM pg_stat_activity WHERE pid = $1',
          [pid],
        )
      ).rows;
      assert.equal(
        activity?.state,
        'idle in transaction',
        'the row lock lives in an open transaction',
      );

      const waiter = otherSide.locks.session('nightly-report');
      const waiting = waiter.lock({ timeout: '10s' });
      assert.equal(await otherSide.locks.session('nightly-report').tryLock(), null);

      await otherEngine.pool.query('SELECT pg_terminate_backend($1)', [pid]);

      await waitFor('the holder signal', () => holder.signal.aborted);
      assert.ok(isLeaseholdError(holder.signal.reason, 'lease_lost'));
      assert.equal(holder.isHeld(), false);
      assert.equal(await holder.unlock(), false, 'nothing left to unlock');

      const next = await within(waiting, 10_000, 'the waiting holder');
      assert.ok(next > token, `next token ${next} > dropped holder's ${token}`);
      assert.equal(waiter.isHeld(), true);

      // The dropped holder can take part again, and is fenced behind the current term.
      assert.equal(await holder.tryLock(), null);
      await waiter.unlock();
      const again = await holder.lock({ timeout: '10s' });
      assert.ok(again > next);
      await holder.unlock();
    }));
});
