/**
 * `leasehold/drizzle`: a Drizzle transaction (node-postgres driver) as leasehold's caller
 * transaction.
 *
 * ```ts
 * const db = drizzle(pool); // drizzle-orm/node-postgres
 * await db.transaction(async (tx) => {
 *   await tx.insert(orders).values(order);
 *   await lh.queue('emails').enqueue({ orderId: order.id }, { tx: fromDrizzle(tx) });
 * });
 * ```
 *
 * `tx.execute` takes any SQLWrapper: leasehold hands it one whose query is its own text and
 * values, placeholders and all, so Drizzle sends them as they are (no parameter renumbered or
 * bound twice) and this module imports Drizzle's types only (drizzle-orm stays an optional peer).
 */
import type { SQL, SQLWrapper } from 'drizzle-orm';
import type { CallerTransaction } from '../engine/types.js';
import { requireTransaction } from './check.js';

/** What leasehold needs of a Drizzle transaction: its `execute` (and `rollback`, to know it). */
export interface DrizzleTransaction {
  execute(query: SQLWrapper): PromiseLike<unknown>;
  rollback(): unknown;
}

/** PostgreSQL's type id for timestamptz (pg_type.oid), the one timestamp type leasehold reads. */
const TIMESTAMPTZ = 1184;

export function fromDrizzle(tx: DrizzleTransaction): CallerTransaction {
  requireTransaction(
    tx,
    'execute',
    // A transaction (PgTransaction) has rollback(); the database object has not.
    (t) => typeof (t as { rollback?: unknown }).rollback === 'function',
    'a Drizzle transaction (db.transaction(async (tx) => …)), not the database object',
  );
  return {
    async query(text, values = []) {
      let result: unknown;
      try {
        result = await tx.execute(rawSql(text, values));
      } catch (error) {
        // Drizzle wraps the driver's error (DrizzleQueryError): the driver's own, with its
        // SQLSTATE, is what tells leasehold a serialization failure from a bad statement.
        throw driverError(error);
      }
      const answer = result as {
        rows?: Record<string, unknown>[];
        rowCount?: number | null;
        fields?: { name: string; dataTypeID: number }[];
      };
      if (!Array.isArray(answer?.rows) || !Array.isArray(answer.fields))
        throw new TypeError(
          "fromDrizzle: the answer is not node-postgres's (use drizzle-orm/node-postgres)",
        );
      return { rows: withDates(answer.rows, answer.fields), rowCount: answer.rowCount };
    },
  };
}

/**
 * A SQLWrapper whose query is exactly `text` with `values`. Drizzle's dialect builds a query by
 * calling `toQuery` on what `getSQL()` returns; leasehold's text is already built.
 */
function rawSql(text: string, values: readonly unknown[]): SQLWrapper {
  const built = { sql: text, params: [...values] };
  const sql = { toQuery: () => built, getSQL: () => sql };
  return sql as unknown as SQL;
}

/**
 * Drizzle's node-postgres session asks pg to leave timestamps as text (its column mappers parse
 * them), so a raw statement's timestamptz columns arrive as strings: parsed here to the Dates
 * pg gives by default, which leasehold's row mapping expects. The columns are known by type
 * from pg's field list.
 */
function withDates(
  rows: Record<string, unknown>[],
  fields: { name: string; dataTypeID: number }[],
): Record<string, unknown>[] {
  const stamped = fields.filter((f) => f.dataTypeID === TIMESTAMPTZ).map((f) => f.name);
  if (stamped.length === 0) return rows;
  for (const row of rows)
    for (const name of stamped) {
      const value = row[name];
      if (typeof value === 'string') row[name] = parseTimestamptz(value);
    }
  return rows;
}

/**
 * PostgreSQL's ISO text of a timestamptz (`2026-11-23 13:29:27.123456+00`, `…+05:30`) as a Date,
 * truncated to milliseconds as pg does. The text is made ISO 8601 (`T`, `+00:00`) so the result
 * does not depend on a JavaScript engine's lenient parsing; leasehold's own timestamps are
 * recent, so years before 1000, BC and infinity (which this refuses) do not arise.
 */
export function parseTimestamptz(text: string): Date {
  const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?([+-]\d\d)(?::(\d\d))?$/.exec(text);
  if (!match) throw new RangeError(`fromDrizzle: unexpected timestamptz text "${text}"`);
  const [, date, time, fraction = '', hours, minutes = '00'] = match;
  const ms = (fraction + '000').slice(0, 3);
  return new Date(`${date}T${time}.${ms}${hours}:${minutes}`);
}

function driverError(error: unknown): unknown {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause : error;
}
