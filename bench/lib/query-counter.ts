/**
 * Counts the statements the database executes over a window: from pg_stat_statements when the
 * server loads it (every statement, with the busiest named), else from pg_stat_database's
 * committed and rolled-back transactions (each statement outside a transaction block is one;
 * backends flush these counters lazily, so a short window is approximate). The counter's own
 * queries carry a marker and are left out.
 */
import pg from 'pg';

const MARK = 'bench-monitor';

export interface QueryWindow {
  readonly queries: number;
  /** The statements run most often in the window (pg_stat_statements only). */
  readonly top: { query: string; calls: number }[];
}

export interface QueryCounter {
  readonly method: string;
  /** Counts what runs while `during` runs. */
  measure(during: () => Promise<void>): Promise<QueryWindow>;
  close(): Promise<void>;
}

type Snapshot = Map<string, { calls: number; query: string }>;

export async function openQueryCounter(
  url: string,
  statementStats: boolean,
): Promise<QueryCounter> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const close = () => client.end();
  if (statementStats) {
    const snapshot = async (): Promise<Snapshot> => {
      const { rows } = await client.query<{ key: string; calls: string; query: string }>(
        `SELECT /* ${MARK} */ concat_ws(':', userid, dbid, queryid, toplevel) AS key, calls::text AS calls,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query
           FROM pg_stat_statements WHERE query NOT LIKE '%${MARK}%'`,
      );
      // PostgreSQL 18 identifies a statement by its tables' names, not their schemas', so one
      // entry serves every schema: the text shown is the first one seen, its schema hidden.
      return new Map(
        rows.map((r) => [
          r.key,
          { calls: Number(r.calls), query: r.query.replace(/"bench_\w+"\./g, '<schema>.') },
        ]),
      );
    };
    return {
      method: 'pg_stat_statements (calls of every statement)',
      close,
      async measure(during) {
        const before = await snapshot();
        await during();
        const after = await snapshot();
        const deltas = [...after].map(([key, { calls, query }]) => ({
          query,
          calls: calls - (before.get(key)?.calls ?? 0),
        }));
        return {
          queries: deltas.reduce((sum, d) => sum + Math.max(0, d.calls), 0),
          top: deltas
            .filter((d) => d.calls > 0)
            .sort((a, b) => b.calls - a.calls)
            .slice(0, 6),
        };
      },
    };
  }
  const transactions = async (): Promise<number> => {
    const { rows } = await client.query<{ n: string }>(
      `SELECT /* ${MARK} */ (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = current_database()`,
    );
    return Number(rows[0]!.n);
  };
  return {
    method: 'pg_stat_database transactions (xact_commit + xact_rollback)',
    close,
    async measure(during) {
      const before = await transactions();
      await during();
      const after = await transactions();
      // The first snapshot's own transaction is counted inside the window.
      return { queries: Math.max(0, after - before - 1), top: [] };
    },
  };
}
