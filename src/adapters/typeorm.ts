/**
 * `leasehold/typeorm`: a TypeORM transaction as leasehold's caller transaction, given either the
 * EntityManager of `dataSource.transaction(...)` or a QueryRunner.
 *
 * ```ts
 * await dataSource.transaction(async (manager) => {
 *   await manager.save(Order, order);
 *   await lh.queue('emails').enqueue({ orderId: order.id }, { tx: fromTypeORM(manager) });
 * });
 * ```
 *
 * Statements run on the transaction's query runner with the structured answer
 * (`query(text, values, true)`: records and affected), which is the same for every statement;
 * the plain answer of the postgres driver is rows, or `[rows, count]` for UPDATE and DELETE.
 */
import type { EntityManager, QueryRunner } from 'typeorm';
import { InvalidArgumentError } from '../core/errors.js';
import type { CallerTransaction } from '../engine/types.js';

export function fromTypeORM(tx: EntityManager | QueryRunner): CallerTransaction {
  const runner = queryRunnerOf(tx);
  return {
    async query(text, values = []) {
      const result = await runner.query(text, values, true);
      const rows = (result.records ?? []) as unknown[];
      return { rows, rowCount: result.affected ?? rows.length };
    },
  };
}

/**
 * The query runner that holds the transaction: the given one, or the manager's. A manager outside
 * `dataSource.transaction` has none (each statement would run on some pooled connection), and a
 * runner before startTransaction() would commit each statement on its own: both are refused.
 */
function queryRunnerOf(tx: EntityManager | QueryRunner): QueryRunner {
  const value = tx as Partial<EntityManager> & Partial<QueryRunner>;
  const runner =
    typeof value === 'object' && value !== null
      ? 'isTransactionActive' in value
        ? (value as QueryRunner)
        : value.queryRunner
      : undefined;
  if (!runner || typeof runner.query !== 'function' || !runner.isTransactionActive)
    throw new InvalidArgumentError(
      'tx',
      'must be the EntityManager of dataSource.transaction(...) or a QueryRunner in a transaction',
    );
  return runner;
}
