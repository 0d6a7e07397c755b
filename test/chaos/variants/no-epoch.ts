/**
 * Broken variant (g), for failover chaos runs: tokens without the server epoch (decision 0225).
 * Every statement that grants a new term asks `token_epoch()` (migration 7) for the epoch of the
 * server's history, its token floor (epoch * 2^32) and its quarantine, and the function raises
 * LHE01 on a history it has not recorded (a promoted standby). This variant replaces the
 * function in its own schema, after migrating, with one that always answers epoch 0, floor 0 and
 * no quarantine, and never notices a promotion: tokens go on from whatever the promoted
 * standby's rows hold, as before the epoch existed. Nothing differs on one server, nor after a
 * failover that lost nothing; after an asynchronous failover that lost acknowledged grants, the
 * next holders are handed tokens that were already handed out.
 */
import { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';
import type { MigrationReport } from '../../../src/engine/engine.js';
import { quoteSchema } from '../../../src/engine/postgres/sql-identifiers.js';

export class NoEpochEngine extends PostgresEngine {
  override async migrate(): Promise<MigrationReport> {
    const report = await super.migrate();
    const s = quoteSchema(this.schema);
    // Deliberately blind to the server's history: the epoch of migration 7, switched off.
    await this.pool.query(`
      CREATE OR REPLACE FUNCTION ${s}.token_epoch(
        OUT epoch integer, OUT token_floor bigint, OUT quarantine_until timestamptz)
      LANGUAGE sql VOLATILE AS $fn$ SELECT 0, 0::bigint, '-infinity'::timestamptz $fn$`);
    return report;
  }
}
