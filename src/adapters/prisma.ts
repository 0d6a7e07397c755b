/**
 * `leasehold/prisma`: Prisma's interactive transaction as leasehold's caller transaction.
 *
 * ```ts
 * await prisma.$transaction(async (tx) => {
 *   await tx.order.create({ data: order });
 *   await lh.queue('emails').enqueue({ orderId: order.id }, { tx: fromPrisma(tx) });
 * });
 * ```
 *
 * Statements run through `$queryRawUnsafe(text, ...values)`, which takes PostgreSQL's `$n`
 * placeholders and answers rows (leasehold's statements that run in a caller's transaction all
 * answer with RETURNING or SELECT; none reads a bare row count). Prisma converts values its own
 * way: bigint columns arrive as BigInt, which is made the string node-postgres gives.
 */
import type { CallerTransaction } from '../engine/types.js';
import { requireTransaction } from './check.js';

/** What leasehold needs of Prisma's transaction client (`tx` of `$transaction(async (tx) => …)`). */
export interface PrismaRawClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

export function fromPrisma(tx: PrismaRawClient): CallerTransaction {
  requireTransaction(
    tx,
    '$queryRawUnsafe',
    // The interactive transaction's client is the PrismaClient without the methods that
    // would act on the whole client ($connect, $disconnect, $on, $use, $extends).
    (t) => typeof (t as { $disconnect?: unknown }).$disconnect !== 'function',
    'the client of prisma.$transaction(async (tx) => …), not the PrismaClient',
  );
  return {
    async query(text, values = []) {
      let rows: Record<string, unknown>[];
      try {
        rows = await tx.$queryRawUnsafe<Record<string, unknown>[]>(text, ...values);
      } catch (error) {
        throw withSqlState(error);
      }
      for (const row of rows)
        for (const key in row) if (typeof row[key] === 'bigint') row[key] = String(row[key]);
      return { rows, rowCount: rows.length };
    },
  };
}

/**
 * Prisma reports a failed raw statement as P2010, the database's SQLSTATE inside: in
 * `meta.driverAdapterError.cause` with a driver adapter (Prisma 7), in `meta.code` without one.
 * leasehold tells a retryable failure (serialization, deadlock, a server going away) from a bad
 * statement by that code, so the error is made node-postgres-like: `code`, `severity`, and
 * Prisma's error as its cause.
 */
function withSqlState(error: unknown): unknown {
  const meta = (error as { meta?: PrismaErrorMeta } | null)?.meta;
  const cause = meta?.driverAdapterError?.cause;
  const code = cause?.originalCode ?? cause?.code ?? meta?.code;
  if (typeof code !== 'string') return error;
  const message = cause?.originalMessage ?? cause?.message ?? (error as Error).message;
  return Object.assign(new Error(String(message), { cause: error }), {
    code,
    ...(cause?.severity ? { severity: cause.severity } : {}),
  });
}

interface PrismaErrorMeta {
  code?: unknown;
  driverAdapterError?: {
    cause?: {
      originalCode?: unknown;
      code?: unknown;
      originalMessage?: unknown;
      message?: unknown;
      severity?: unknown;
    };
  };
}
