// Two service instances on one database: the generator runs on exactly one, both answer the same
// status, a stop sent to either stops it, and killing the generating instance moves generation to
// the other once the dead instance's term has expired (not before: the order is checked on the
// database's clock), within the lease ttl and room for a busy machine.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Leasehold } from '../../src/leasehold.js';
import { GENERATOR_RESOURCE } from '../../src/processes/generator.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS, SCHEDULING_SLACK_MS } from '../support/timing.js';
import { waitFor } from '../support/wait.js';

after(closeTestDatabase);

const TTL_MS = 1_500;
const INTERVAL_MS = 150;

async function serve(
  url: string,
  schema: string,
  id: string,
): Promise<{ process: CliProcess; base: string }> {
  const proc = startCli([
    'serve',
    '--database-url',
    url,
    '--schema',
    schema,
    '--port',
    '0',
    '--instance-id',
    id,
    '--generator-interval',
    String(INTERVAL_MS),
    '--generator-ttl',
    String(TTL_MS),
  ]);
  const [, base] = await proc.waitForLine(/listening on (http:\/\/\S+)/, EVENT_TIMEOUT_MS);
  return { process: proc, base: base! };
}

const json = async <T>(response: Promise<Response>): Promise<T> =>
  (await response).json() as Promise<T>;
interface Status {
  state: string;
  runningOn: string | null;
  token: number | null;
}

describe('generator across two service instances', () => {
  it('runs on exactly one instance, agrees everywhere, stops from either, and fails over within its ttl', () =>
    withSchema('generator failover', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const a = await serve(schema.url, schema.schema, 'instance-a');
      const b = await serve(schema.url, schema.schema, 'instance-b');
      try {
        const status = (base: string) => json<Status>(fetch(`${base}/api/generator`));
        await fetch(`${a.base}/api/generator/start`, { method: 'POST' });
        const leader = (await waitFor(
          'a generating instance',
          async () => (await status(b.base)).runningOn,
          { timeoutMs: EVENT_TIMEOUT_MS },
        ))!;
        const [fromA, fromB] = await Promise.all([status(a.base), status(b.base)]);
        // The leader renews its term while the two answers are read, so the expiry each one
        // reports may differ by a renewal; everything else must be the same.
        const agreed = ({ leaseExpiresAt, ...rest }: Status & { leaseExpiresAt?: string }) => {
          assert.ok(leaseExpiresAt === undefined || !Number.isNaN(Date.parse(leaseExpiresAt)));
          return rest;
        };
        assert.deepEqual(agreed(fromA), agreed(fromB), 'both instances answer the same');
        assert.equal(fromA.state, 'started');

        const generatedBy = async () =>
          (await lh.engine.jobList({ queue: 'tasks', limit: 1000, offset: 0 })).map(
            (j) => j.headers['generated-by'],
          );
        await waitFor('a few generated tasks', async () => (await generatedBy()).length >= 5, {
          timeoutMs: EVENT_TIMEOUT_MS,
        });
        assert.deepEqual([...new Set(await generatedBy())], [leader], 'only the leader generated');

        // Stop through the instance that is NOT generating.
        const follower = leader === 'instance-a' ? b : a;
        const stopped = await json<Status>(
          fetch(`${follower.base}/api/generator/stop`, { method: 'POST' }),
        );
        assert.equal(stopped.state, 'stopped');
        const letGo = () =>
          waitFor('the leader to let go', async () => (await status(a.base)).runningOn === null, {
            timeoutMs: EVENT_TIMEOUT_MS,
          });
        await letGo();
        // A tick that read the control just before the stop may still finish its enqueue; on a
        // loaded machine its lease may even have lapsed for a moment (runningOn null) and be
        // taken again by that tick. Give such a tick a ttl to end, see the generator let go
        // again, and only then count: what is generated after that is generated after the stop.
        await new Promise((r) => setTimeout(r, TTL_MS));
        await letGo();
        const countAfterStop = (await generatedBy()).length;
        await new Promise((r) => setTimeout(r, INTERVAL_MS * 6));
        assert.equal((await generatedBy()).length, countAfterStop, 'nothing generated after stop');

        // Start again and kill whoever generates: the other takes over once its term expires.
        await fetch(`${follower.base}/api/generator/start`, { method: 'POST' });
        const second = (await waitFor(
          'a generating instance',
          async () => (await status(follower.base)).runningOn,
          { timeoutMs: EVENT_TIMEOUT_MS },
        ))!;
        const victim = second === 'instance-a' ? a : b;
        const survivor = second === 'instance-a' ? b : a;
        const tokenBefore = (await status(survivor.base)).token!;
        // The victim's term as last seen: a renewal after this read only ends it later.
        const termBefore = (await lh.leases.get(GENERATOR_RESOURCE))!;
        victim.process.kill('SIGKILL');
        const killedAt = Date.now();
        const next = await waitFor(
          'the survivor to take over',
          async () => {
            const s = await status(survivor.base);
            return s.runningOn !== null && s.runningOn !== second ? s : null;
          },
          { timeoutMs: EVENT_TIMEOUT_MS, intervalMs: 25 },
        );
        const takeoverMs = Date.now() - killedAt;
        assert.ok(next.token! > tokenBefore, 'the new term has a higher token');
        const termAfter = (await lh.leases.get(GENERATOR_RESOURCE))!;
        assert.equal(termAfter.token, next.token);
        assert.ok(
          termAfter.acquiredAt.getTime() >= termBefore.expiresAt.getTime(),
          `the survivor's term began at ${termAfter.acquiredAt.toISOString()}, not before the victim's ended at ${termBefore.expiresAt.toISOString()}`,
        );
        assert.ok(
          takeoverMs <= TTL_MS + INTERVAL_MS + SCHEDULING_SLACK_MS,
          `took over after ${takeoverMs} ms (ttl ${TTL_MS} ms)`,
        );
        console.log(
          `# generator takeover after SIGKILL: ${takeoverMs} ms (ttl ${TTL_MS} ms, interval ${INTERVAL_MS} ms)`,
        );
      } finally {
        a.process.kill('SIGKILL');
        b.process.kill('SIGKILL');
        await Promise.all([a.process.exited(), b.process.exited()]);
      }
    }));
});
