/**
 * What the producer role's checkers need from the database (enqueue-duplicates.ts,
 * partition-order.ts): its jobs, in id order, with the call each one came from; and the stall
 * that makes some of its INSERTs slow, installed in the run's schema.
 */
import type pg from 'pg';
import type { EnqueuedFact } from '../history.js';
import { PRODUCER_QUEUE } from '../child/roles/producer.js';

/**
 * A job whose payload has `stallMs` sleeps that long in its INSERT: a real statement stalled in
 * the database, longer than the coalescer's stall limit (25 ms), as a lock wait would be.
 */
export async function installEnqueueStall(pool: pg.Pool, schema: string): Promise<void> {
  const s = `"${schema}"`;
  await pool.query(`
    CREATE OR REPLACE FUNCTION ${s}.chaos_enqueue_stall() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_sleep((NEW.payload->>'stallMs')::float8 / 1000);
      RETURN NEW;
    END $$;
    CREATE TRIGGER chaos_enqueue_stall BEFORE INSERT ON ${s}.jobs FOR EACH ROW
      WHEN (NEW.payload ? 'stallMs') EXECUTE FUNCTION ${s}.chaos_enqueue_stall();`);
}

export async function readEnqueuedFacts(pool: pg.Pool, schema: string): Promise<EnqueuedFact[]> {
  const { rows } = await pool.query<{ id: string; op_id: string; part: string; seq: number }>(
    `SELECT id, payload->>'opId' AS op_id, payload->>'part' AS part, (payload->>'seq')::int AS seq
     FROM "${schema}".jobs WHERE queue = $1 ORDER BY id`,
    [PRODUCER_QUEUE],
  );
  return rows.map((r) => ({ id: Number(r.id), opId: r.op_id, part: r.part, seq: r.seq }));
}
