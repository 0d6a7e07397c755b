// A process that received messages and closed leasehold without settling them exits: a message's
// visibility deadline does not hold the process open (decision 0284). Before, each unsettled
// message kept a timer until its visibility timeout passed, ten minutes here.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { startScript } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/close-holding-messages.ts', import.meta.url).pathname;
const MESSAGES = 3;
/** Far past the test's own patience, so an exit can only come from the process letting go. */
const VISIBILITY = '10m';

describe('a pull consumer closing with messages unsettled', () => {
  it('exits after lh.close(), long before the messages become visible again', () =>
    withSchema('message close', async (ctx) => {
      const lh = Leasehold.fromEngine(await ctx.engine({ poolSize: 2 }));
      await lh
        .queue('pull')
        .enqueueMany(Array.from({ length: MESSAGES }, (_, i) => ({ payload: { i } })));
      const proc = startScript(FIXTURE, [], {
        DATABASE_URL: ctx.url,
        SCHEMA: ctx.schema,
        QUEUE: 'pull',
        VISIBILITY,
        MAX: String(MESSAGES),
      });
      try {
        await proc.waitForLine(/"event":"closed"/, EVENT_TIMEOUT_MS);
        assert.ok(
          proc.lines.some((l) => l.includes(`"count":${MESSAGES}`)),
          `received all ${MESSAGES}: ${proc.lines.join('\n')}`,
        );
        const closedAt = Date.now();
        const exit = await Promise.race([
          proc.exited(),
          new Promise<'still running'>((resolve) =>
            setTimeout(() => resolve('still running'), EVENT_TIMEOUT_MS).unref(),
          ),
        ]);
        assert.deepEqual(
          exit,
          { code: 0, signal: null },
          `${Date.now() - closedAt} ms after close`,
        );
        // The messages are still held: closing gave nothing back, the visibility stands.
        const jobs = await lh.engine.jobList({ queue: 'pull', limit: 10, offset: 0 });
        assert.equal(jobs.filter((j) => j.status === 'processing').length, MESSAGES);
      } finally {
        proc.kill('SIGKILL');
        await lh.close();
      }
    }));
});
