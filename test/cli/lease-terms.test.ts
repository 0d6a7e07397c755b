// `leasehold leases record-terms on|off|status` and `leasehold leases terms <resource>`
// (decision 0267): the switch of lease term recording and a lease's terms, through the library.
// On PostgreSQL with its `now` pinned to a ManualClock; bad input is a non-zero exit that
// changes nothing.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { Leasehold } from '../../src/leasehold.js';
import { runCliCaptured as run } from '../support/cli-in-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

describe('leasehold leases terms and record-terms', () => {
  it('turns recording on, lists a takeover, and refuses an unknown setting', () =>
    withSchema('cli lease terms', async (schema) => {
      const db = ['--database-url', schema.url, '--schema', schema.schema];
      const clock = new ManualClock();
      const lh = Leasehold.fromEngine(await schema.engine({ clock }));

      const status = await run(['leases', 'record-terms', 'status', ...db]);
      assert.equal(status.code, 0, status.stderr);
      assert.equal(status.stdout, 'lease term recording is off\n');
      const bad = await run(['leases', 'record-terms', 'maybe', ...db]);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /setting/);
      assert.equal(await lh.leases.termRecording(), false, 'a bad setting changes nothing');
      const on = await run(['leases', 'record-terms', 'on', ...db]);
      assert.equal(on.stdout, 'lease term recording is on\n');
      assert.equal(await lh.leases.termRecording(), true);

      const a = await lh.leases.acquire('report', { holder: 'a', ttl: 10_000 });
      assert.ok(a);
      await clock.advance(10_001);
      const b = await lh.leases.acquire('report', { holder: 'b', ttl: 10_000 });
      assert.ok(b);
      const listed = await run(['leases', 'terms', 'report', ...db, '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      const terms = JSON.parse(listed.stdout) as {
        holder: string;
        ended: string | null;
        takeover: boolean;
      }[];
      assert.deepEqual(
        terms.map((t) => [t.holder, t.ended, t.takeover]),
        [
          ['b', null, true],
          ['a', 'expired', false],
        ],
      );
      const text = await run(['leases', 'terms', 'report', ...db]);
      assert.match(text.stdout, /^token\s+holder\s+startedAt\s+endedAt\s+ended\s+takeover/);
      await lh.close();
    }));
});
