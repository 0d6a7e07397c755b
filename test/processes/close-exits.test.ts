// A process that closes leasehold while it still holds something with a long term exits
// (decisions 0284 and 0285). Before, a held lease, lease lock or permit kept its renewal and
// deadline timers (renewing against the closed engine until its trust deadline), and each
// unsettled pull-consumer message its deadline timer: ten minutes here.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startScript } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/close-holding.ts', import.meta.url).pathname;
/** Far past the test's own patience, so an exit can only come from the process letting go. */
const TTL = '10m';

interface Closed {
  took: number;
  aborted: number;
}

/** Runs the fixture holding `hold`; answers what it reported once it has exited. */
async function holdAndClose(url: string, schema: string, hold: string): Promise<Closed> {
  const proc = startScript(FIXTURE, [], {
    DATABASE_URL: url,
    SCHEMA: schema,
    HOLD: hold,
    TTL,
    NAME: 'held',
  });
  try {
    await proc.waitForLine(/"event":"closed"/, EVENT_TIMEOUT_MS);
    const closedAt = Date.now();
    const exit = await Promise.race([
      proc.exited(),
      new Promise<'still running'>((resolve) =>
        setTimeout(() => resolve('still running'), EVENT_TIMEOUT_MS).unref(),
      ),
    ]);
    assert.deepEqual(exit, { code: 0, signal: null }, `${Date.now() - closedAt} ms after close`);
    const event = (name: string): Record<string, number> =>
      JSON.parse(proc.lines.find((l) => l.includes(`"event":"${name}"`))!) as Record<
        string,
        number
      >;
    return { took: event('took')['count']!, aborted: event('closed')['aborted']! };
  } finally {
    proc.kill('SIGKILL');
  }
}

describe('a process closing leasehold while it holds terms', () => {
  it('exits with messages unsettled, and their visibility stands', () =>
    withSchema('close with messages', async (ctx) => {
      const lh = Leasehold.fromEngine(await ctx.engine({ poolSize: 2 }));
      try {
        await lh.queue('held').enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
        const closed = await holdAndClose(ctx.url, ctx.schema, 'messages');
        assert.deepEqual(closed, { took: 3, aborted: 0 }, 'messages are not settled by close');
        const jobs = await lh.engine.jobList({ queue: 'held', limit: 10, offset: 0 });
        assert.equal(jobs.filter((j) => j.status === 'processing').length, 3);
      } finally {
        await lh.close();
      }
    }));

  for (const hold of ['lease', 'lease-lock'] as const)
    it(`exits holding a ${hold}, released by close for the next holder at once`, () =>
      withSchema(`close with a ${hold}`, async (ctx) => {
        const lh = Leasehold.fromEngine(await ctx.engine({ poolSize: 2 }));
        try {
          const closed = await holdAndClose(ctx.url, ctx.schema, hold);
          assert.deepEqual(closed, { took: 1, aborted: 1 }, 'its signal fired at close');
          const next =
            hold === 'lease'
              ? await lh.leases.acquire('held', { holder: 'next', ttl: '10s' })
              : await lh.locks.lease('held', { ttl: '10s', holder: 'next' }).tryLock();
          assert.ok(next, `the ${hold} is free`);
        } finally {
          await lh.close();
        }
      }));

  for (const hold of ['permit', 'held-permit'] as const)
    it(`exits holding a semaphore ${hold === 'permit' ? 'permit' : 'permit it renews'}, released by close`, () =>
      withSchema(`close with a ${hold}`, async (ctx) => {
        const lh = Leasehold.fromEngine(await ctx.engine({ poolSize: 2 }));
        try {
          const closed = await holdAndClose(ctx.url, ctx.schema, hold);
          assert.deepEqual(closed, { took: 1, aborted: 1 }, 'its signal fired at close');
          const semaphore = lh.locks.semaphore('held', { permits: 2 });
          const permits = [
            await semaphore.acquire({ holder: 'next-1', ttl: '10s' }),
            await semaphore.acquire({ holder: 'next-2', ttl: '10s' }),
          ];
          assert.ok(
            permits.every((p) => p !== null),
            'both permits are free',
          );
          await Promise.all(permits.map((p) => p?.release()));
        } finally {
          await lh.close();
        }
      }));
});
