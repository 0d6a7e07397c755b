/**
 * The session settings every pooled connection gets before its first statement
 * (postgres-engine.ts, sessionSettings): the server-side statement bound, and no JIT, which
 * compiled every claim of a limited queue on servers built with LLVM (over a second each).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

describe('session settings of the pool', () => {
  it('sets statement_timeout and turns JIT off on every pooled connection', () =>
    withSchema('session settings', async ({ engine }) => {
      const e = await engine({ statementTimeoutMs: 4_321, poolSize: 3 });
      // Three connections at once, so more than the first one is looked at.
      const seen = await Promise.all(
        [0, 1, 2].map(() =>
          e.pool.query<{ timeout: string; jit: string }>(
            "SELECT current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit, pg_sleep(0.05)",
          ),
        ),
      );
      for (const { rows } of seen)
        assert.deepEqual(rows[0], { timeout: '4321ms', jit: 'off', pg_sleep: '' });
    }));
});
