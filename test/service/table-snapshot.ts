/**
 * A fingerprint of every table in a schema: its row count and the sum of a hash of each row,
 * read in one prepared statement. Two equal snapshots mean no row was added, removed or
 * changed (bar a hash collision); the fuzz test takes one around every request the service
 * refused, so it is made cheap: no sort (the sum does not depend on row order), no re-planning.
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
    const { rows } = await this.pool.query<{ t: string; n: number; h: string }>({
      name: 'table_snapshot',
      text: this.query,
    });
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
          `SELECT '${t}' AS t, count(*)::int AS n, coalesce(sum(hashtext(x::text)), 0)::text AS h
           FROM ${quote(this.schema)}.${quote(t)} x`,
      )
      .join(' UNION ALL ');
  }
}
