// The job family's statement names follow the jobs heap's size class (decision 0282): a new
// name, so a new plan, each time the heap has doubled or halved, and no more than a bounded
// number of names however large the table grows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JobsSizeClass } from '../../src/engine/postgres/jobs-size-class.js';

const PAGE = 8192;

describe('JobsSizeClass', () => {
  it('names a statement after the heap size class, moving when the heap doubles or halves', () => {
    const size = new JobsSizeClass();
    assert.equal(size.name('JobClaimBatch'), 'JobClaimBatch.0', 'before any answer');
    size.observe(PAGE);
    assert.equal(size.name('JobClaimBatch'), 'JobClaimBatch.0');
    size.observe(3 * PAGE);
    assert.equal(size.name('JobClaimBatch'), 'JobClaimBatch.1');
    size.observe(4 * PAGE);
    assert.equal(size.name('JobComplete'), 'JobComplete.2');
    size.observe(7 * PAGE);
    assert.equal(size.name('JobComplete'), 'JobComplete.2', 'short of a doubling: same plan');
    size.observe(2 * PAGE);
    assert.equal(size.name('JobComplete'), 'JobComplete.1', 'a heap truncated by vacuum');
  });

  it('stops at a top class, so a connection keeps a bounded number of plans', () => {
    const size = new JobsSizeClass();
    size.observe(2 ** 40);
    const top = size.name('JobFail');
    size.observe(2 ** 50);
    assert.equal(size.name('JobFail'), top);
    assert.equal(top, 'JobFail.12');
  });

  it('keeps its class when an answer carries no size, or not as a number', () => {
    const size = new JobsSizeClass();
    size.observe(64 * PAGE);
    size.observe(null);
    size.observe(Number.NaN);
    size.observe(String(1024 * PAGE));
    assert.equal(size.name('JobRenewLeases'), 'JobRenewLeases.6');
  });
});
