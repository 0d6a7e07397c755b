// The producer role's checkers on hand-made histories (decision 0220): a job created twice for one
// call, and a partition's jobs out of call order, with calls of unknown outcome left out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkEnqueueDuplicates } from './checkers/enqueue-duplicates.js';
import { checkPartitionOrder } from './checkers/partition-order.js';
import { historyOf } from './history-builder.js';
import type { ChildEventBody, EnqueuedFact } from './history.js';

const answered = (opId: string, seq: number, phase: 'ok' | 'fail' = 'ok', error?: string) =>
  ({
    type: 'enqueue',
    phase,
    opId,
    part: 'p',
    seq,
    ...(error ? { error } : {}),
  }) as ChildEventBody;
const job = (id: number, opId: string, seq: number): EnqueuedFact => ({ id, opId, part: 'p', seq });

describe('enqueue checkers', () => {
  it('duplicate: reports a call that created two jobs, and nothing for one job per call', () => {
    const clean = historyOf([answered('a', 1), answered('b', 2)], {
      facts: { enqueued: [job(1, 'a', 1), job(2, 'b', 2)] },
    });
    assert.deepEqual(checkEnqueueDuplicates(clean), []);
    const doubled = historyOf([answered('a', 1)], {
      facts: { enqueued: [job(1, 'a', 1), job(4, 'a', 1)] },
    });
    assert.deepEqual(
      checkEnqueueDuplicates(doubled).map((v) => v.kind),
      ['enqueue-duplicate'],
    );
  });

  it('partition order: reports a later call whose job came first; a gap is no violation', () => {
    const gap = historyOf(
      [answered('a', 1), answered('b', 2, 'fail', 'conflict'), answered('c', 3)],
      {
        facts: { enqueued: [job(1, 'a', 1), job(3, 'c', 3)] },
      },
    );
    assert.deepEqual(checkPartitionOrder(gap), []);
    const inverted = historyOf([answered('a', 1), answered('b', 2)], {
      facts: { enqueued: [job(1, 'b', 2), job(2, 'a', 1)] },
    });
    assert.deepEqual(
      checkPartitionOrder(inverted).map((v) => v.kind),
      ['partition-order'],
    );
  });

  it('partition order: leaves out a call of unknown outcome, and one never answered', () => {
    const unknown = historyOf(
      [answered('a', 1, 'fail', 'unavailable (outcome unknown)'), answered('b', 2)],
      { facts: { enqueued: [job(1, 'b', 2), job(2, 'a', 1), job(3, 'z', 0)] } },
    );
    assert.deepEqual(checkPartitionOrder(unknown), []);
  });
});
