/**
 * `leasehold/knex`: a Knex transaction as leasehold's caller transaction.
 *
 * ```ts
 * await knex.transaction(async (trx) => {
 *   await trx('orders').insert(order);
 *   await lh.queue('emails').enqueue({ orderId: order.id }, { tx: fromKnex(trx) });
 * });
 * ```
 *
 * Knex's `raw` takes `?` placeholders, not PostgreSQL's `$n`: the text is rewritten (knexSql
 * below) and Knex's pg client answers with node-postgres's own result, rows and rowCount.
 */
import type { Knex } from 'knex';
import type { CallerTransaction } from '../engine/types.js';
import { requireTransaction } from './check.js';

export function fromKnex(trx: Knex.Transaction): CallerTransaction {
  requireTransaction(
    trx,
    'raw',
    (t) => t.isTransaction === true,
    'a Knex transaction (knex.transaction(async (trx) => …)), not the knex instance',
  );
  return {
    async query(text, values = []) {
      const { sql, bindings } = knexSql(text, values);
      const result = (await trx.raw(sql, bindings as Knex.RawBinding[])) as {
        rows?: unknown[];
        rowCount?: number | null;
      };
      if (!Array.isArray(result?.rows))
        throw new TypeError('fromKnex: the Knex client did not answer with rows (is it pg?)');
      return { rows: result.rows, rowCount: result.rowCount };
    },
  };
}

/**
 * `$n` placeholders as Knex's positional `?`, each with its value (a `$n` used twice binds its
 * value twice), and every literal `?` of the text (jsonb's `?`, `?|`, `?&` operators) escaped as
 * `\?`, which Knex sends as a plain `?` instead of taking it for a binding.
 */
export function knexSql(
  text: string,
  values: readonly unknown[],
): { sql: string; bindings: unknown[] } {
  const bindings: unknown[] = [];
  const sql = text.replace(/\$(\d+)|\?/g, (match, n: string | undefined) => {
    if (n === undefined) return '\\?';
    const index = Number(n) - 1;
    if (index >= values.length)
      throw new RangeError(`fromKnex: ${match} has no value (${values.length} given)`);
    bindings.push(values[index]);
    return '?';
  });
  return { sql, bindings };
}
