import type { Writable } from 'node:stream';

/** Prints rows as JSON (one array) or as an aligned text table with the given columns. */
export function printRows(
  out: Writable,
  rows: readonly object[],
  columns: readonly string[],
  json: boolean,
): void {
  if (json) {
    out.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  if (rows.length === 0) {
    out.write('(none)\n');
    return;
  }
  const cells = rows.map((r) => columns.map((c) => text((r as Record<string, unknown>)[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]): string =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  out.write(`${line([...columns])}\n`);
  for (const row of cells) out.write(`${line(row)}\n`);
}

export function printObject(out: Writable, value: unknown, json: boolean): void {
  if (json || typeof value !== 'object' || value === null) {
    out.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  for (const [k, v] of Object.entries(value)) out.write(`${k}: ${text(v)}\n`);
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
