/**
 * Broken variant, for the chaos harness only: the leases table made UNLOGGED (a tempting
 * "speed-up": no WAL for the busiest table). PostgreSQL empties an unlogged table in crash
 * recovery, so after a `pg-crash` every lease row is gone and the next acquire of a resource
 * starts its tokens again from the first: a token handed out before the crash is handed out a
 * second time. Caught as `token-order` and by the linearizability checker (a grant's token must
 * be above every token handed out for the resource).
 */
import type { MigrationReport } from '../../../src/engine/engine.js';
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import { quoteSchema } from '../../../src/engine/postgres/sql-identifiers.js';

export class UnloggedLeasesEngine extends PostgresEngine {
  override async migrate(): Promise<MigrationReport> {
    const report = await super.migrate();
    // Deliberately not crash-safe: the table's rows vanish in crash recovery.
    await this.pool.query(`ALTER TABLE ${quoteSchema(this.schema)}.leases SET UNLOGGED`);
    return report;
  }
}
