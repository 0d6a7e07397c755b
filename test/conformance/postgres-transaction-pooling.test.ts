// Runs the whole conformance suite on the PostgreSQL engine in `poolMode: 'transaction'`,
// through a real pgbouncer in transaction-pooling mode (a fresh schema per case). What that
// mode lacks (advisory and session locks, LISTEN) the engine declares in its capabilities, and
// those cases are reported as skipped with the reason; everything else must behave as directly.
import { after } from 'node:test';
import { closeTestDatabase } from '../support/database.js';
import { pgbouncerAvailable, startPgbouncer, type Bouncer } from '../support/pgbouncer.js';
import { postgresHarness } from './harness.js';
import { defineAllCases } from './all-cases.js';

const throughBouncer = pgbouncerAvailable() || process.env.CI === 'true';
if (!throughBouncer)
  console.log(
    '# pgbouncer is not installed (apt-get install pgbouncer): the transaction-pooling conformance runs directly against PostgreSQL, in poolMode transaction',
  );

let bouncer: Promise<Bouncer> | undefined;

defineAllCases(
  postgresHarness('postgres, poolMode transaction', async (databaseUrl) => ({
    connectionString: throughBouncer
      ? (await (bouncer ??= startPgbouncer(databaseUrl, 8))).url
      : databaseUrl,
    poolMode: 'transaction',
  })),
);
after(async () => {
  await (await bouncer)?.stop();
  await closeTestDatabase();
});
