/**
 * The protected work of every holder: one increment of a counter, guarded by the fence in the
 * same transaction. The increment is a read-modify-write (read the value, write value + 1) so
 * that two writers not kept apart would lose an update; each one also writes a ledger row with a
 * commit-order sequence, so the checkers can account for every increment.
 *
 * Outcomes: `ok` once COMMIT succeeded; `fail` when the transaction failed before COMMIT was
 * sent (nothing committed); nothing at all when COMMIT itself failed, because then the outcome
 * is unknown (the commit may have happened before the connection died).
 */
import type pg from 'pg';
import type { Leasehold } from '../../../src/leasehold.js';
import { checkout } from './checkout.js';
import type { Emit } from './emit.js';

export interface IncrementTarget {
  lh: Leasehold;
  pool: pg.Pool;
  schema: string;
  emit: Emit;
  proc: string;
  incarnation: number;
}

let sequence = 0;

export async function fencedIncrement(
  target: IncrementTarget,
  scope: string,
  token: number,
): Promise<boolean> {
  const { lh, pool, schema, emit } = target;
  const opId = `${target.proc}#${target.incarnation}:${++sequence}`;
  emit({ type: 'increment', phase: 'invoke', scope, opId, token });
  let client: pg.PoolClient;
  let release: (broken: boolean) => void;
  try {
    ({ client, release } = await checkout(pool));
  } catch (error) {
    emit({ type: 'increment', phase: 'fail', scope, opId, token, error: codeOf(error) });
    return false;
  }
  let committing = false;
  let broken = false;
  try {
    await client.query('BEGIN');
    await lh.fence(scope).check(client, token);
    const { rows } = await client.query<{ value: string }>(
      `SELECT value FROM "${schema}".chaos_counters WHERE scope = $1`,
      [scope],
    );
    const next = Number(rows[0]?.value ?? 0) + 1;
    await client.query(
      `INSERT INTO "${schema}".chaos_counters (scope, value) VALUES ($1, $2)
       ON CONFLICT (scope) DO UPDATE SET value = excluded.value`,
      [scope, next],
    );
    await client.query(
      `INSERT INTO "${schema}".chaos_ledger (seq, scope, op_id, token)
       VALUES (nextval('"${schema}".chaos_ledger_seq'), $1, $2, $3)`,
      [scope, opId, token],
    );
    committing = true;
    await client.query('COMMIT');
    emit({ type: 'increment', phase: 'ok', scope, opId, token });
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    if (!committing)
      emit({ type: 'increment', phase: 'fail', scope, opId, token, error: codeOf(error) });
    return false;
  } finally {
    // A client whose connection died must not go back to the pool.
    release(broken);
  }
}

export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'error';
}
