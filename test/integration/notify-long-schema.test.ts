/**
 * A NOTIFY channel is an identifier of at most 63 bytes, and the channel is `leasehold_<schema>`:
 * with a schema name over 53 characters pg_notify used to fail ("channel name too long") and
 * LISTEN silently truncated the name, so nothing was delivered. Long names now get a shortened
 * channel with a hash; two long names sharing a prefix must still not hear each other.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PostgresEngine } from '../../src/engine/postgres/postgres-engine.js';
import { closeTestDatabase, testDatabaseUrl } from '../support/database.js';
import { EventQueue } from '../support/events.js';

after(closeTestDatabase);

describe('notifications on a schema with a long name', () => {
  it('delivers on two 63-character schemas that share their first 50 characters, each to its own listeners', async () => {
    const url = await testDatabaseUrl();
    const prefix = 'notify_long_schema_name_'.padEnd(50, 'x');
    const run = Math.random().toString(36).slice(2, 8);
    const [a, b] = ['a', 'b'].map(
      (which) =>
        new PostgresEngine({
          connectionString: url,
          schema: `${prefix}_${run}_${which}`.padEnd(63, '0'),
          poolSize: 1,
        }),
    ) as [PostgresEngine, PostgresEngine];
    try {
      assert.equal(a.schema.length, 63);
      const heardByA = new EventQueue<string>();
      const heardByB = new EventQueue<string>();
      await a.notifyListen({ topic: 't', onNotify: heardByA.push });
      await b.notifyListen({ topic: 't', onNotify: heardByB.push });
      await a.notifySend({ topic: 't', payload: 'for a' });
      await b.notifySend({ topic: 't', payload: 'for b' });
      assert.equal(await heardByA.next(), 'for a');
      assert.equal(await heardByB.next(), 'for b', 'b did not hear a');
      assert.equal(heardByA.length, 0, 'a did not hear b');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
