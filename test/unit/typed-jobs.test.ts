// Typed jobs (decision 0247): the compile-time checks are the `@ts-expect-error` lines below,
// which `npm run typecheck` verifies (an expected error that does not happen fails it); the
// runtime checks are the worker's option validation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLeaseholdError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';

interface Email {
  to: string;
}
interface Sms {
  number: string;
}
type Jobs = { email: Email; sms: Sms };

describe('typed jobs', () => {
  it('types enqueue payloads and handlers by job type', async () => {
    const lh = Leasehold.memory();
    try {
      const q = lh.queue<Jobs>('typed');
      await q.enqueue({ to: 'a@example.com' }, { type: 'email' });
      await q.enqueueMany([
        { payload: { number: '1' }, options: { type: 'sms' } },
        { payload: { to: 'b@example.com' }, options: { type: 'email' } },
      ]);
      // @ts-expect-error: an email's payload for an sms
      await q.enqueue({ to: 'c@example.com' }, { type: 'sms' });
      // @ts-expect-error: a type the map does not have
      await q.enqueue({ to: 'd@example.com' }, { type: 'fax' });
      // @ts-expect-error: a typed queue's enqueue needs its type
      await q.enqueue({ to: 'e@example.com' });
      lh.worker<Jobs>({
        queues: 'typed',
        handlers: {
          email: async (job) => job.payload.to.toUpperCase(),
          sms: async (job) => job.payload.number,
        },
      });
      lh.worker<Jobs>({
        queues: 'typed',
        handlers: {
          // @ts-expect-error: an sms has no `to`
          sms: async (job) => job.payload.to,
          email: async () => undefined,
        },
      });
      // The untyped forms are unchanged.
      await lh.queue('plain').enqueue({ anything: true });
      assert.equal((await lh.engine.jobList({ queue: 'typed', limit: 10, offset: 0 })).length, 6);
    } finally {
      await lh.close();
    }
  });

  it('refuses a worker with neither or both of handler and handlers, or a bad handlers map', async () => {
    const lh = Leasehold.memory();
    try {
      const handler = async (): Promise<undefined> => undefined;
      const bad: [() => unknown, string][] = [
        [() => lh.worker({ queues: 'q' }), 'handler'],
        [() => lh.worker({ queues: 'q', handler, handlers: { a: handler } }), 'handler'],
        [() => lh.worker({ queues: 'q', handlers: {} }), 'handlers'],
        [() => lh.worker({ queues: 'q', handlers: [] as never }), 'handlers'],
        [() => lh.worker({ queues: 'q', handlers: { a: 'no' as never } }), 'handlers.a'],
      ];
      for (const [make, field] of bad)
        assert.throws(
          make,
          (e) => isLeaseholdError(e, 'invalid_argument') && e.details.field === field,
          field,
        );
    } finally {
      await lh.close();
    }
  });
});
