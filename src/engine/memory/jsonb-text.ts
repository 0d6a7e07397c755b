/**
 * A JSON value as PostgreSQL prints a jsonb (`payload::text`), so that the memory engine's
 * payload search (decision 0266) matches the same text the PostgreSQL engine's ILIKE does: a
 * space after each `:` and `,`, and object keys in jsonb's order (shorter keys first, then by
 * bytes).
 */
import { byCodePoint } from './code-point-order.js';

export function jsonbText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort(jsonbKeyOrder);
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${jsonbText(object[k])}`).join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** jsonb's key order: by length in UTF-8 bytes, then bytewise (code point order on UTF-8). */
const utf8 = new TextEncoder();

function jsonbKeyOrder(a: string, b: string): number {
  return utf8.encode(a).length - utf8.encode(b).length || byCodePoint(a, b);
}
