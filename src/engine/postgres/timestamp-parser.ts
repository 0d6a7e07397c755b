/**
 * A faster reader for `timestamptz` text. node-postgres parses every timestamp with a general
 * regular expression (postgres-date); a job row carries up to six of them, and a profile of a
 * 40k-job burn-down spent more of the worker's time there (10%) than in any other function but
 * the garbage collector. PostgreSQL's ISO output is fixed-width up to its fraction and offset
 * (`2026-11-23 13:29:27.123456+00`, `… +05:30`), so this reads it by position; anything else
 * (infinity, BC, years before 100 or past 9999, another DateStyle) goes to node-postgres's own
 * parser, and so does every other type. Milliseconds are truncated, as node-postgres does.
 */
import pg from 'pg';

const TIMESTAMPTZ_OID = 1184;

const fallback = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date;

const ZERO = 48;
const DOT = 46;

/** The value of the digits text[from, to), or -1 when one of them is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/** Milliseconds since the epoch of ISO `timestamptz` text, or NaN when it is not in that form. */
function readIso(text: string): number {
  if (text.length < 22 || text[4] !== '-' || text[7] !== '-' || text[10] !== ' ') return NaN;
  if (text[13] !== ':' || text[16] !== ':') return NaN;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  if (year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return NaN;
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === DOT) {
    // The first three digits are the milliseconds; the rest is truncated away.
    const start = ++i;
    let scale = 100;
    for (let d = text.charCodeAt(i) - ZERO; d >= 0 && d <= 9; d = text.charCodeAt(++i) - ZERO) {
      ms += d * scale;
      scale /= 10;
    }
    if (i === start) return NaN;
    ms = Math.trunc(ms);
  }
  const sign = text[i] === '+' ? 1 : text[i] === '-' ? -1 : 0;
  if (sign === 0) return NaN;
  const offsetHours = digits(text, i + 1, i + 3);
  if (offsetHours < 0) return NaN;
  let offsetSeconds = offsetHours * 3600;
  i += 3;
  if (text[i] === ':') {
    const minutes = digits(text, i + 1, i + 3);
    if (minutes < 0) return NaN;
    offsetSeconds += minutes * 60;
    i += 3;
    if (text[i] === ':') {
      const seconds = digits(text, i + 1, i + 3);
      if (seconds < 0) return NaN;
      offsetSeconds += seconds;
      i += 3;
    }
  }
  if (i !== text.length) return NaN;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  return utc - sign * offsetSeconds * 1000;
}

/**
 * The last few texts read, with their instants. A job row carries up to five timestamps, and
 * the rows of one answer mostly share them (a claimed batch its claimed_at, updated_at and
 * lease_expires_at; jobs enqueued together their created_at and available_at), so most reads
 * are a comparison with a text from the row before. Filled round robin.
 */
const RECENT = 4;
const recentTexts: string[] = new Array<string>(RECENT).fill('');
const recentMs: number[] = new Array<number>(RECENT).fill(0);
let nextSlot = 0;

export function parseTimestamptz(text: string): Date {
  for (let i = 0; i < RECENT; i++) if (recentTexts[i] === text) return new Date(recentMs[i]!);
  const ms = readIso(text);
  if (Number.isNaN(ms)) return fallback(text);
  recentTexts[nextSlot] = text;
  recentMs[nextSlot] = ms;
  nextSlot = (nextSlot + 1) % RECENT;
  return new Date(ms);
}

/** Per-query type parsers: our timestamptz reader, node-postgres's parsers for the rest. */
export const QUERY_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ_OID && format !== 'binary'
      ? parseTimestamptz
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};
