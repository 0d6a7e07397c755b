/**
 * The fast `timestamptz` reader must read exactly what node-postgres's own parser reads, for
 * every text PostgreSQL can send: fractions of 0 to 6 digits, offsets of hours, minutes and
 * seconds (a session TimeZone decides the offset), and the forms it hands back to node-postgres.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { parseTimestamptz } from '../../src/engine/postgres/timestamp-parser.js';
import { closeTestDatabase, testDatabaseUrl } from '../support/database.js';

after(closeTestDatabase);

const driverParser = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number;

function assertSameAsDriver(text: string): void {
  const ours = parseTimestamptz(text);
  const theirs = driverParser(text);
  const expected = theirs instanceof Date ? theirs.getTime() : theirs;
  assert.equal(ours instanceof Date ? ours.getTime() : ours, expected, `reading ${text}`);
}

describe('the timestamptz reader', () => {
  it('reads what PostgreSQL sends in any session time zone as node-postgres does', async () => {
    const client = new pg.Client({ connectionString: await testDatabaseUrl() });
    await client.connect();
    try {
      // Zones with whole-hour, half-hour, quarter-hour, negative and historical LMT offsets
      // (Amsterdam before 1937 is +00:19:32, sent with seconds).
      const zones = [
        'UTC',
        'Asia/Kolkata',
        'Asia/Kathmandu',
        'America/St_Johns',
        'Europe/Amsterdam',
      ];
      let read = 0;
      for (const zone of zones) {
        await client.query(`SET TimeZone = '${zone}'`);
        const { rows } = await client.query<{ t: string }>({
          text: `SELECT t::text AS t FROM (
                   SELECT timestamptz '1900-01-01 00:00:00+00' + random() * interval '200 years' AS t
                   FROM generate_series(1, 400)
                   UNION ALL SELECT date_trunc('second', now())
                   UNION ALL SELECT date_trunc('milliseconds', now())
                   UNION ALL SELECT timestamptz '2026-11-23 13:29:27.1+00'
                   UNION ALL SELECT timestamptz '2026-11-23 13:29:27.12+00'
                   UNION ALL SELECT timestamptz '2026-11-23 13:29:27.999999+00'
                   UNION ALL SELECT timestamptz '1920-06-01 12:00:00.5+00'
                   UNION ALL SELECT timestamptz 'infinity'
                   UNION ALL SELECT timestamptz '-infinity'
                   UNION ALL SELECT timestamptz '0044-03-15 12:00:00+00 BC'
                   UNION ALL SELECT timestamptz '0099-12-31 23:59:59.5+00'
                   UNION ALL SELECT timestamptz '12345-01-01 00:00:00+00'
                 ) s`,
        });
        for (const { t } of rows) assertSameAsDriver(t);
        read += rows.length;
      }
      assert.ok(read > 2_000);
    } finally {
      await client.end();
    }
  });

  it('answers a text read moments before with a new Date of the same instant', () => {
    const texts = [
      '2026-11-23 13:29:27.123456+00',
      '2026-11-23 13:29:57.123456+00',
      '2026-11-23 13:29:27.123456+05:30',
      '2026-11-23 13:29:27.123456+00',
      'infinity',
      '2026-11-23 13:29:57.123456+00',
      'infinity',
    ];
    const first = parseTimestamptz(texts[0]!);
    first.setTime(0); // a caller changing its Date must not change what the next read answers
    for (const text of [...texts, ...texts, ...texts]) assertSameAsDriver(text);
    assert.notEqual(parseTimestamptz(texts[0]!), parseTimestamptz(texts[0]!));
  });

  it('hands text in another form to node-postgres', () => {
    for (const text of ['2026-11-23 13:29:27', '2026-11-23T13:29:27Z', '2026-11-23 13:29:27.+00'])
      assertSameAsDriver(text);
  });
});
