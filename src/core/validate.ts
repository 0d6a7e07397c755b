import { InvalidArgumentError } from './errors.js';
import { typeName } from './duration.js';
import type { JobProgress } from './types.js';

/** Limits that every entry point (library, HTTP, CLI) applies identically. */
export const LIMITS = {
  nameMaxLength: 256,
  metadataMaxBytes: 16 * 1024,
  /** Shortest lease: below this a round trip to the database eats the whole lease. */
  ttlMinMs: 10,
  /** Longest lease: one day. Longer ownership should be a record, not a lease. */
  ttlMaxMs: 24 * 60 * 60 * 1000,
  listMaxLimit: 1000,
  /** Most permits of one semaphore: each is a row, created on the first acquire that needs it. */
  semaphoreMaxPermits: 10_000,
  /** A job's progress object (`ctx.progress`): small, since a chatty handler rewrites it often. */
  progressMaxBytes: 64 * 1024,
} as const;

// C0/C1 control characters make names unreadable in logs and dashboards; NUL breaks PostgreSQL text.

const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

// A lone UTF-16 surrogate has no UTF-8 form: pg sends U+FFFD in its place, so two different names
// would share one row on PostgreSQL while staying apart in memory. With the `u` flag this class
// matches only unpaired surrogates, never the halves of a well-formed pair (emoji are fine).
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** A non-empty, bounded, printable string such as a resource or holder name. */
export function requireName(
  field: string,
  value: unknown,
  maxLength: number = LIMITS.nameMaxLength,
): string {
  if (typeof value !== 'string')
    throw new InvalidArgumentError(field, `must be a string, got ${typeName(value)}`);
  if (value.length === 0) throw new InvalidArgumentError(field, 'must not be empty');
  if (value.length > maxLength) {
    throw new InvalidArgumentError(
      field,
      `must be at most ${maxLength} characters, got ${value.length}`,
    );
  }
  if (CONTROL_CHARS.test(value))
    throw new InvalidArgumentError(field, 'must not contain control characters');
  if (LONE_SURROGATE.test(value))
    throw new InvalidArgumentError(field, 'must be well-formed Unicode (no lone surrogates)');
  return value;
}

export function requireSafeInteger(field: string, value: unknown, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new InvalidArgumentError(field, `must be an integer, got ${typeName(value)}`);
  }
  if (value < min) throw new InvalidArgumentError(field, `must be at least ${min}, got ${value}`);
  return value;
}

/** Each of `keys` of `options` is absent or a function (callbacks such as onLost). */
export function optionalFunctions<K extends string>(
  options: Partial<Record<K, unknown>>,
  keys: readonly K[],
): void {
  for (const key of keys)
    if (options[key] !== undefined && typeof options[key] !== 'function')
      throw new InvalidArgumentError(key, 'must be a function');
}

/** An optional boolean option: `fallback` when absent, a typed error for anything but a boolean. */
export function optionalBoolean(field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new InvalidArgumentError(field, `must be true or false, got ${typeName(value)}`);
  return value;
}

export type JsonObject = { [key: string]: unknown };

/** A plain JSON object of bounded size (lease metadata, job headers). */
export function requireJsonObject(
  field: string,
  value: unknown,
  maxBytes: number = LIMITS.metadataMaxBytes,
): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(field, `must be a JSON object, got ${typeName(value)}`);
  }
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    throw new InvalidArgumentError(field, 'must be serialisable as JSON');
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes)
    throw new InvalidArgumentError(
      field,
      `must be at most ${maxBytes} bytes of JSON, got ${bytes}`,
    );
  const parsed: unknown = JSON.parse(text);
  // An object whose toJSON returns something else (a Date gives a string) is not a JSON object.
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new InvalidArgumentError(field, 'must serialise to a JSON object');
  const bad = unstorableText(parsed);
  if (bad) throw new InvalidArgumentError(field, `must not contain ${bad} in keys or strings`);
  return parsed as JsonObject;
}

/**
 * What jsonb refuses although JSON.stringify accepts it: NUL (`\u0000`) and lone surrogates.
 * Rejected here so both engines agree and the error names the field, not the SQL statement.
 * Walks with an explicit stack: JSON.stringify succeeded, but the nesting may still be deep.
 */
export function unstorableText(root: unknown): string | undefined {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    const texts: string[] = typeof value === 'string' ? [value] : [];
    if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        texts.push(key);
        pending.push(child);
      }
    }
    for (const text of texts) {
      if (text.includes('\u0000')) return 'NUL characters';
      if (LONE_SURROGATE.test(text)) return 'lone surrogates';
    }
  }
  return undefined;
}

/**
 * A job's progress (`ctx.progress`, decision 0251): a finite number from 0 to 100 (a
 * percentage), or a JSON object of at most LIMITS.progressMaxBytes; answered as stored.
 */
export function requireJobProgress(field: string, value: unknown): JobProgress {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > 100)
      throw new InvalidArgumentError(field, `must be a number from 0 to 100, got ${value}`);
    return value;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      field,
      `must be a number from 0 to 100 or a JSON object, got ${typeName(value)}`,
    );
  return requireJsonObject(field, value, LIMITS.progressMaxBytes);
}

export function requireOneOf<T extends string>(
  field: string,
  value: unknown,
  allowed: readonly T[],
): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(
      field,
      `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as T;
}

/** A PostgreSQL identifier we are willing to splice into SQL: lower-case, no quoting needed. */
export function requireSqlIdentifier(field: string, value: unknown): string {
  if (typeof value !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(value)) {
    throw new InvalidArgumentError(
      field,
      `must be a lower-case SQL identifier (letters, digits, underscores; at most 63; not starting with a digit), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * `value` as an object of options whose keys are all among `fields` (`undefined` is `{}`):
 * a misspelt option is an error naming it, not a setting silently ignored.
 */
export function requireKnownFields<F extends string>(
  name: string,
  value: unknown,
  fields: readonly F[],
  kind: string,
): Partial<Record<F, unknown>> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(name, `must be an object, got ${typeName(value)}`);
  for (const field of Object.keys(value))
    if (!(fields as readonly string[]).includes(field))
      throw new InvalidArgumentError(
        field,
        `is not a ${kind} field (the fields are ${fields.join(', ')})`,
      );
  return value as Partial<Record<F, unknown>>;
}
