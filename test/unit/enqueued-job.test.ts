// toEnqueuedJob copies the job field by field (a spread was 10× slower): the answer must carry
// every field the engine answered, with the same values, plus created and replaced. A field
// added to Job as optional would pass the compiler and be dropped here; this test then fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newJob } from '../../src/engine/jobs.js';
import { toEnqueuedJob } from '../../src/queue/enqueued-job.js';

describe('toEnqueuedJob', () => {
  const created = new Date('2026-12-07T10:00:00.000Z');
  const job = newJob(
    {
      queue: 'mail',
      type: 'welcome.v1',
      key: 'user-7',
      payload: { to: 'a@example.com' },
      headers: { traceparent: '00-aa-bb-01' },
      partitionKey: 'tenant-3',
      priority: 5,
      maxAttempts: 4,
      timeoutMs: 30_000,
    },
    42,
    created,
    new Date(created.getTime() + 1_000),
  );

  it('answers every field of the job, unchanged, then created and replaced', () => {
    const answer = toEnqueuedJob({ job, created: false, replaced: true });
    assert.deepEqual(Object.keys(answer), [...Object.keys(job), 'created', 'replaced']);
    for (const [field, value] of Object.entries(job))
      assert.equal(answer[field as keyof typeof answer], value, field);
    assert.equal(answer.created, false);
    assert.equal(answer.replaced, true);
  });

  it('is a new object: the engine job is left as it was', () => {
    const answer = toEnqueuedJob({ job, created: true, replaced: false });
    assert.notEqual(answer, job);
    assert.equal('created' in job, false);
  });
});
