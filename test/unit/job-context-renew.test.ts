// JobContext.renew() asks the worker's renewer for a round now; heartbeat(), its former name
// (decision 0235), is kept as a deprecated alias that does the same. On the memory engine with
// the system clock: the handler's renewals are seen as jobRenewLeases calls of the engine.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EngineCallEvent } from '../../src/engine/instrumented-engine.js';
import { Leasehold } from '../../src/leasehold.js';
import type { JobContext } from '../../src/queue/worker-options.js';
import { waitForJob } from '../../src/testing/wait-for-job.js';

describe('JobContext.renew', () => {
  it('renews the job lease at once when a handler asks, by renew() and by its deprecated alias heartbeat()', async () => {
    const lh = Leasehold.memory();
    const renewals: EngineCallEvent[] = [];
    lh.on('engine', (call) => {
      if (call.operation === 'jobRenewLeases' && call.outcome === 'ok') renewals.push(call);
    });
    const asked: string[] = [];
    const ask = async (name: string, call: () => Promise<void>): Promise<void> => {
      const before = renewals.length;
      await call();
      asked.push(name);
      assert.ok(renewals.length > before, `${name}() resolved after a renewal round`);
    };
    const worker = lh.worker({
      queues: 'renew-test',
      // A renewal period far longer than the test: only the handler's asks renew.
      leaseTtl: '10m',
      renewEvery: '5m',
      pollInterval: 20,
      handler: async (_job, context: JobContext) => {
        await ask('renew', () => context.renew());
        await ask('heartbeat', () => context.heartbeat());
        return { asked };
      },
    });
    try {
      await worker.start();
      const job = await lh.queue('renew-test').enqueue({ n: 1 });
      const done = await waitForJob(lh, job.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(asked, ['renew', 'heartbeat']);
      assert.ok(renewals.length >= 2);
    } finally {
      await worker.stop();
      await lh.close();
    }
  });
});
