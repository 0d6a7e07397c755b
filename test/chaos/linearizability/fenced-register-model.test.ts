// The fenced register model: writes guarded by tokens, reads of the last accepted value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fencedRegisterModel,
  type RegisterInput,
  type RegisterOperation,
  type RegisterOutput,
} from './fenced-register-model.js';
import { checkOperations } from './search.js';

const op = (
  client: string,
  call: number,
  ret: number,
  input: RegisterInput,
  output?: RegisterOutput,
): RegisterOperation =>
  output === undefined
    ? { client, call, ret: Infinity, input, unknown: true }
    : { client, call, ret, input, output };
const write = (token: number, value: string, key = 'k'): RegisterInput => ({
  kind: 'write',
  key,
  token,
  value,
});
const read = (key = 'k'): RegisterInput => ({ kind: 'read', key });
const accepted: RegisterOutput = { kind: 'accepted' };
const refused: RegisterOutput = { kind: 'refused' };
const value = (v: string | null): RegisterOutput => ({ kind: 'value', value: v });

describe('fenced register model', () => {
  it('refuses an older token accepted after a newer one; the broken variant accepts it', () => {
    const history = [
      op('b', 0, 1, write(2, 'b'), accepted),
      op('a', 2, 3, write(1, 'a'), accepted),
    ];
    assert.equal(checkOperations(fencedRegisterModel(), history).verdict, 'illegal');
    assert.equal(
      checkOperations(fencedRegisterModel({ acceptAnyToken: true }), history).verdict,
      'ok',
    );
  });

  it('accepts the same pair when they overlap (the older one went first)', () => {
    const history = [
      op('b', 0, 3, write(2, 'b'), accepted),
      op('a', 1, 2, write(1, 'a'), accepted),
    ];
    assert.equal(checkOperations(fencedRegisterModel(), history).verdict, 'ok');
    const then = [...history, op('c', 4, 5, read(), value('b'))];
    assert.equal(checkOperations(fencedRegisterModel(), then).verdict, 'ok');
    const wrong = [...history, op('c', 4, 5, read(), value('a'))];
    assert.equal(checkOperations(fencedRegisterModel(), wrong).verdict, 'illegal');
  });

  it('accepts a concurrent pair of equal tokens in either order, as the reads say', () => {
    const pair = [op('a', 0, 10, write(1, 'x'), accepted), op('b', 1, 9, write(1, 'y'), accepted)];
    for (const v of ['x', 'y']) {
      const history = [...pair, op('c', 11, 12, read(), value(v))];
      assert.equal(checkOperations(fencedRegisterModel(), history).verdict, 'ok', v);
    }
  });

  it('requires a refusal to have a newer token before it', () => {
    const refusedAlone = [op('a', 0, 1, write(1, 'a'), refused)];
    assert.equal(checkOperations(fencedRegisterModel(), refusedAlone).verdict, 'illegal');
    const refusedAfter = [
      op('b', 0, 1, write(2, 'b'), accepted),
      ...refusedAlone.map((o) => ({ ...o, call: 2, ret: 3 })),
    ];
    assert.equal(checkOperations(fencedRegisterModel(), refusedAfter).verdict, 'ok');
  });

  it('lets an unknown-outcome write explain a later read, or not take effect', () => {
    const history = [op('a', 0, Infinity, write(3, 'a')), op('b', 5, 6, read(), value('a'))];
    assert.equal(checkOperations(fencedRegisterModel(), history).verdict, 'ok');
    const none = [op('a', 0, Infinity, write(3, 'a')), op('b', 5, 6, read(), value(null))];
    assert.equal(checkOperations(fencedRegisterModel(), none).verdict, 'ok');
    // Taking effect it would have blocked this write with an older token: so it did not.
    const older = [
      ...none,
      op('c', 7, 8, write(2, 'c'), accepted),
      op('b', 9, 10, read(), value('c')),
    ];
    assert.equal(checkOperations(fencedRegisterModel(), older).verdict, 'ok');
  });

  it('checks each key alone', () => {
    const history = [
      op('b', 0, 1, write(2, 'b', 'k1'), accepted),
      op('a', 2, 3, write(1, 'a', 'k2'), accepted),
    ];
    const result = checkOperations(fencedRegisterModel(), history);
    assert.equal(result.verdict, 'ok');
    assert.equal(result.partitions.length, 2);
  });
});
