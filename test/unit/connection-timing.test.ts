/**
 * The timing options of `Leasehold.connect`: documented defaults, the query bound derived from
 * the statement bound, and bad values refused with a typed error naming the option, before any
 * connection is made.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../../src/core/errors.js';
import {
  CONNECTION_TIMING_DEFAULTS,
  lockLossBoundMs,
  lockSessionKeepalive,
  resolveConnectionTiming,
} from '../../src/engine/postgres/connection-timing.js';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp } from '../../src/service/app.js';

describe('connection timing', () => {
  it('has the documented defaults', () => {
    assert.deepEqual(resolveConnectionTiming({}), {
      connectTimeoutMs: 10_000,
      statementTimeoutMs: 10_000,
      queryTimeoutMs: 12_000,
      keepAliveIdleMs: 10_000,
      lockProbeIntervalMs: 1_000,
      lockProbeTimeoutMs: 2_000,
    });
    assert.equal(CONNECTION_TIMING_DEFAULTS.queryTimeoutSlackMs, 2_000);
  });

  it('derives the query bound from the statement bound unless given', () => {
    assert.equal(resolveConnectionTiming({ statementTimeoutMs: 500 }).queryTimeoutMs, 2_500);
    assert.equal(
      resolveConnectionTiming({ statementTimeoutMs: 500, queryTimeoutMs: 700 }).queryTimeoutMs,
      700,
    );
  });

  it('asks the server to wait at least twice the lock loss bound before freeing a lock', () => {
    for (const options of [{}, { lockProbeIntervalMs: 250, lockProbeTimeoutMs: 400 }]) {
      const timing = resolveConnectionTiming(options);
      const { idleS, intervalS, count } = lockSessionKeepalive(timing);
      assert.ok(idleS * 1_000 >= 2 * lockLossBoundMs(timing));
      assert.ok(intervalS >= 1 && count >= 1);
    }
  });

  for (const [field, value] of [
    ['statementTimeoutMs', 0],
    ['queryTimeoutMs', -1],
    ['connectTimeoutMs', 1.5],
    ['keepAliveIdleMs', 500],
    ['lockProbeIntervalMs', '1s'],
    ['lockProbeTimeoutMs', 86_400_001],
  ] as const) {
    it(`refuses ${field}: ${JSON.stringify(value)} with invalid_argument naming it`, () => {
      const options = { connectionString: 'postgres://nowhere.invalid/db', [field]: value };
      for (const attempt of [
        () => resolveConnectionTiming(options as never),
        () => new PostgresEngine(options as never),
      ]) {
        assert.throws(attempt, (error: unknown) => {
          assert.ok(error instanceof InvalidArgumentError);
          assert.equal(error.field, field);
          return true;
        });
      }
    });
  }

  it('refuses a reply timeout that is not a positive integer', async () => {
    const lh = Leasehold.memory();
    try {
      await assert.rejects(buildApp({ lh, replyTimeoutMs: 0 }), (error: unknown) => {
        assert.ok(error instanceof InvalidArgumentError);
        assert.equal(error.field, 'replyTimeoutMs');
        return true;
      });
    } finally {
      await lh.close();
    }
  });
});
