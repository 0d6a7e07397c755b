/**
 * A fingerprint of every table in a schema: its row count and an md5 of its rows in a stable
 * order, read in one statement. Two equal snapshots mean no row was added, removed or changed;
 * the fuzz and injection tests take one around requests the service refused.
 */
import pg from 'pg';

export type TableSnapshot = Record<string, { rows: number; digest: string }>;

export class TableSnapshotter {
  private readonly pool: pg.Pool;
  private query?: string;

  constructor(
    url: string,
    private readonly schema: string,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 1 });
    this.pool.on('error', () => {});
  }

  async take(): Promise<TableSnapshot> {
    this.query ??= await this.buildQuery();
    const { rows } = await this.pool.query<{ t: string; n: number; h: string }>(this.query);
    return Object.fromEntries(rows.map((r) => [r.t, { rows: r.n, digest: r.h }]));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async buildQuery(): Promise<string> {
    const { rows } = await this.pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
       WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
      [this.schema],
    );
    if (rows.length === 0) throw new Error(`schema ${this.schema} has no tables`);
    // Test code: the identifiers come from the catalogue and are quoted.
    const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
    return rows
      .map(
        ({ table_name: t }) =>
          `SELECT '${t}' AS t, count(*)::int AS n,
             md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h
           FROM ${quote(this.schema)}.${quote(t)} x`,
      )
      .join(' UNION ALL ');
  }
}
