/**
 * The schema of one run: leasehold's own tables (migrated by the engine variant under test, which
 * may add its own) plus the tables the children's protected work writes to.
 */
import type { PostgresEngine } from '../../../src/engine/postgres/postgres-engine.js';

export async function prepareChaosSchema(engine: PostgresEngine): Promise<void> {
  await engine.migrate();
  const s = `"${engine.schema}"`;
  await engine.pool.query(`
    CREATE TABLE IF NOT EXISTS ${s}.chaos_counters (scope text PRIMARY KEY, value bigint NOT NULL);
    CREATE SEQUENCE IF NOT EXISTS ${s}.chaos_ledger_seq;
    -- No keys on purpose: a doubled increment, effect or slot run must be able to show.
    CREATE TABLE IF NOT EXISTS ${s}.chaos_ledger (
      seq bigint NOT NULL, scope text NOT NULL, op_id text NOT NULL, token bigint NOT NULL);
    CREATE TABLE IF NOT EXISTS ${s}.chaos_effects (
      job_id bigint NOT NULL, generation bigint NOT NULL, worker text NOT NULL);
    -- The workflow role's step rows (no keys either: a doubled step must be able to show).
    CREATE TABLE IF NOT EXISTS ${s}.chaos_steps (
      job_id bigint NOT NULL, step text NOT NULL, generation bigint NOT NULL,
      seen_generation bigint NOT NULL, unfinished_children int);
    CREATE TABLE IF NOT EXISTS ${s}.chaos_schedule_runs (
      name text NOT NULL, slot timestamptz NOT NULL, proc text NOT NULL);
  `);
}
