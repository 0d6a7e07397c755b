/**
 * What a failover looks like to a statement, as pg-errors.ts classifies it (decision 0224): a
 * read-only server (a standby, a primary being demoted) or a server going down or coming up is
 * `unavailable`, never a permanent error, and its connection must be dropped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isConnectionInDoubt,
  isWrongServer,
  mapPgError,
  mustDiscardConnection,
} from '../../src/engine/postgres/pg-errors.js';

/** A server error as node-postgres builds it. */
function serverError(code: string, message: string, severity = 'ERROR'): Error {
  return Object.assign(new Error(message), { code, severity });
}

describe('pg errors of a failover', () => {
  const cases = [
    serverError('25006', 'cannot execute INSERT in a read-only transaction'),
    serverError('25006', 'cannot execute LISTEN during recovery'),
    serverError('57P01', 'terminating connection due to administrator command', 'FATAL'),
    serverError(
      '57P02',
      'terminating connection because of crash of another server process',
      'FATAL',
    ),
    serverError('57P03', 'the database system is shutting down', 'FATAL'),
    serverError('57P03', 'the database system is in recovery mode', 'FATAL'),
  ];

  for (const error of cases)
    it(`${(error as { code?: string }).code} "${error.message}": unavailable, connection dropped`, () => {
      assert.equal(mapPgError(error, 'LeaseAcquire').code, 'unavailable');
      assert.equal(isWrongServer(error), true);
      assert.equal(mustDiscardConnection(error), true);
    });

  it('recognises the messages when a wrapper lost the SQLSTATE', () => {
    for (const message of [
      'cannot execute UPDATE in a read-only transaction',
      'cannot execute SELECT FOR UPDATE in a read-only transaction',
      'the database system is starting up',
    ]) {
      const error = new Error(message);
      assert.equal(mapPgError(error, 'JobClaim').code, 'unavailable', message);
      assert.equal(mustDiscardConnection(error), true, message);
    }
  });

  it('a read-only refusal is a known outcome (nothing ran); a FATAL mid-statement is not', () => {
    assert.equal(mapPgError(cases[0], 'LeaseAcquire').details.outcome, undefined);
    assert.equal(mapPgError(cases[2], 'LeaseAcquire').details.outcome, 'unknown');
  });

  it('leaves ordinary errors alone: the connection stays usable', () => {
    const unique = serverError('23505', 'duplicate key value violates unique constraint "x"');
    assert.equal(isWrongServer(unique), false);
    assert.equal(isConnectionInDoubt(unique), false);
    assert.equal(mustDiscardConnection(unique), false);
    assert.notEqual(mapPgError(unique, 'X').code, 'unavailable');
  });
});
