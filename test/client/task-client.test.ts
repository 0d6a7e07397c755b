// The HTTP task client against a listening service on PostgreSQL, under its names of decision
// 0235 and the former ones it keeps as deprecated aliases: renew (heartbeat) answers the claim's
// new deadline as mustRenewBefore (and mustHeartbeatBefore, the same date); handBack (release)
// gives the task back.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { TaskClient } from '../../src/client/task-client.js';
import { isLeaseholdError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

describe('task client', () => {
  it('renews a claim and hands it back, also through the deprecated heartbeat() and release(), and is refused once the claim moved on', () =>
    withSchema('task client renew', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({ lh, port: 0 });
      try {
        const client = new TaskClient({ baseUrl: server.url });
        const created = await client.create({ n: 1 });
        const task = await client.next('w1', { leaseSeconds: 30 });
        assert.equal(task?.id, created.id);
        const claim = { processor: 'w1', token: task!.token };

        const renewed = await client.renew(task!.id, claim, { leaseSeconds: 60 });
        assert.ok(renewed.mustRenewBefore instanceof Date);
        assert.ok(renewed.mustRenewBefore.getTime() > Date.parse(task!.must_heartbeat_before!));
        assert.equal(renewed.mustHeartbeatBefore, renewed.mustRenewBefore, 'the alias field');
        const stored = await client.get(task!.id);
        assert.equal(Date.parse(stored!.must_heartbeat_before!), renewed.mustRenewBefore.getTime());

        const again = await client.heartbeat(task!.id, claim, { leaseSeconds: 90 });
        assert.ok(again.mustRenewBefore.getTime() > renewed.mustRenewBefore.getTime());
        assert.equal(again.mustHeartbeatBefore, again.mustRenewBefore);

        const stale = { processor: 'w1', token: task!.token + 1 };
        for (const call of [
          () => client.renew(task!.id, stale),
          () => client.heartbeat(task!.id, stale),
        ])
          await assert.rejects(call(), (e: unknown) => isLeaseholdError(e, 'lease_lost'));

        // handBack (PUT /hand-back), then release, its deprecated alias (the seed's /release).
        const handedBack = await client.handBack(task!.id, claim);
        assert.equal(handedBack.status, 'pending');
        await assert.rejects(client.handBack(task!.id, claim), (e: unknown) =>
          isLeaseholdError(e, 'lease_lost'),
        );
        const reclaimed = await client.next('w2');
        assert.equal(reclaimed?.id, created.id);
        const claim2 = { processor: 'w2', token: reclaimed!.token };
        const released = await client.release(reclaimed!.id, claim2);
        assert.equal(released.status, 'pending');
        await assert.rejects(client.release(reclaimed!.id, claim2), (e: unknown) =>
          isLeaseholdError(e, 'lease_lost'),
        );
      } finally {
        await server.close();
      }
    }));

  it('passes onConflict and debounce, and answers whether the create replaced the pending task', () =>
    withSchema('task client replace', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const server = await startServer({ lh, port: 0 });
      try {
        const client = new TaskClient({ baseUrl: server.url });
        const first = await client.create({ n: 1 }, { key: 'k', debounce: '1m' });
        assert.equal(first.replaced, false);
        const second = await client.create({ n: 2 }, { key: 'k', onConflict: 'replace' });
        assert.deepEqual(
          [second.id, second.replaced, second.task_data],
          [first.id, true, { n: 2 }],
        );
        const kept = await client.create({ n: 3 }, { key: 'k', onConflict: 'keep' });
        assert.deepEqual([kept.id, kept.replaced, kept.task_data], [first.id, false, { n: 2 }]);
        await assert.rejects(
          client.create({ n: 4 }, { debounce: '1s' }),
          (e: unknown) => isLeaseholdError(e, 'invalid_argument') && /^debounce: /.test(e.message),
        );
      } finally {
        await server.close();
      }
    }));
});
