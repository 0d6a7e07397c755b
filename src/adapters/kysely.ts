/**
 * `leasehold/kysely`: a Kysely transaction as leasehold's caller transaction.
 *
 * ```ts
 * await db.transaction().execute(async (trx) => {
 *   await trx.insertInto('orders').values(order).execute();
 *   await lh.queue('emails').enqueue({ orderId: order.id }, { tx: fromKysely(trx) });
 * });
 * ```
 *
 * Statements run through `executeQuery` with leasehold's text and `$n` values as they are (the
 * PostgreSQL dialect's own placeholders). Plugins are left out (`withoutPlugins()`): a plugin
 * such as CamelCasePlugin rewrites result rows, and leasehold reads its columns by their names.
 */
import type { CompiledQuery, QueryResult, RawNode } from 'kysely';
import type { CallerTransaction } from '../engine/types.js';
import { requireTransaction } from './check.js';

/** What leasehold needs of a Kysely transaction (`Transaction<DB>` of any DB is one). */
export interface KyselyTransaction {
  readonly isTransaction: boolean;
  withoutPlugins(): {
    executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
  };
}

export function fromKysely(trx: KyselyTransaction): CallerTransaction {
  requireTransaction(
    trx,
    'withoutPlugins',
    (t) => t.isTransaction,
    'a Kysely transaction (db.transaction().execute(async (trx) => …)), not the Kysely instance',
  );
  const plain = trx.withoutPlugins();
  return {
    async query(text, values = []) {
      const result = await plain.executeQuery(rawQuery(text, values));
      const affected = result.numAffectedRows;
      return {
        rows: result.rows as unknown[],
        rowCount: affected === undefined ? result.rows.length : Number(affected),
      };
    },
  };
}

/**
 * What Kysely's `CompiledQuery.raw(text, values)` builds, written out so this module imports
 * Kysely's types only (kysely stays an optional peer): a raw node holding the text, the values,
 * and a query id (used only to pair a plugin's result transform with its query).
 */
function rawQuery(text: string, values: readonly unknown[]): CompiledQuery {
  const node: RawNode = Object.freeze({
    kind: 'RawNode',
    sqlFragments: Object.freeze([text]),
    parameters: Object.freeze([]),
  });
  return Object.freeze({
    sql: text,
    query: node,
    parameters: Object.freeze([...values]),
    queryId: { queryId: 'leasehold' },
  });
}
