import type { Control, ControlOperations } from '../controls.js';
import type { PgContext } from './context.js';

interface ControlRow {
  name: string;
  value: Record<string, unknown>;
  updated_at: Date;
  updated_by: string;
}

const map = (row: ControlRow): Control => ({
  name: row.name,
  value: row.value,
  updatedAt: row.updated_at,
  updatedBy: row.updated_by,
});

/** Controls on PostgreSQL: one row per name, upserted. */
export class PostgresControls implements ControlOperations {
  private readonly sql: { ControlGet: string; ControlSet: string };

  constructor(private readonly ctx: PgContext) {
    const s = ctx.quotedSchema;
    this.sql = {
      ControlGet: `SELECT name, value, updated_at, updated_by FROM ${s}.controls WHERE name = $1`,
      ControlSet: `
        INSERT INTO ${s}.controls AS c (name, value, updated_at, updated_by)
        VALUES ($1, $2::jsonb, coalesce($4::timestamptz, now()), $3)
        ON CONFLICT (name) DO UPDATE
          SET value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by
        RETURNING name, value, updated_at, updated_by`,
    };
  }

  async controlGet(p: { name: string }): Promise<Control | null> {
    const rows = await this.ctx.query<ControlRow>('ControlGet', this.sql.ControlGet, [p.name]);
    return rows[0] ? map(rows[0]) : null;
  }

  async controlSet(p: {
    name: string;
    value: Record<string, unknown>;
    updatedBy: string;
  }): Promise<Control> {
    const rows = await this.ctx.query<ControlRow>('ControlSet', this.sql.ControlSet, [
      p.name,
      JSON.stringify(p.value),
      p.updatedBy,
      this.ctx.pinnedNow(),
    ]);
    return map(rows[0]!);
  }
}
