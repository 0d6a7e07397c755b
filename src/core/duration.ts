import parseMs from 'ms';
import { InvalidArgumentError } from './errors.js';

/** A duration given by a user: milliseconds as a number, or a string such as "30s", "5m", "250ms". */
export type Duration = number | string;

export interface DurationBounds {
  /** Smallest accepted value in ms (inclusive). Defaults to 1: zero and negatives are rejected. */
  min?: number;
  /** Largest accepted value in ms (inclusive). */
  max?: number;
}

/** Parses and range-checks a duration; the error names the field. */
export function toMilliseconds(field: string, value: unknown, bounds: DurationBounds = {}): number {
  const ms = parseDuration(field, value);
  const min = bounds.min ?? 1;
  if (ms < min)
    throw new InvalidArgumentError(
      field,
      `must be at least ${formatDuration(min)}, got ${formatDuration(ms)}`,
    );
  if (bounds.max !== undefined && ms > bounds.max) {
    throw new InvalidArgumentError(
      field,
      `must be at most ${formatDuration(bounds.max)}, got ${formatDuration(ms)}`,
    );
  }
  return ms;
}

function parseDuration(field: string, value: unknown): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new InvalidArgumentError(field, 'must be a finite number of milliseconds');
    return Math.round(value);
  }
  if (typeof value === 'string') {
    // `ms` accepts "1.5h" and "2 days"; it returns undefined (or NaN) for anything it cannot read.
    const parsed =
      value.trim() === ''
        ? undefined
        : (parseMs(value as parseMs.StringValue) as number | undefined);
    if (parsed === undefined || !Number.isFinite(parsed)) {
      throw new InvalidArgumentError(
        field,
        `"${value}" is not a duration (use e.g. 500, "250ms", "30s", "5m")`,
      );
    }
    return Math.round(parsed);
  }
  throw new InvalidArgumentError(
    field,
    `must be a number of milliseconds or a string such as "30s", got ${typeName(value)}`,
  );
}

export function formatDuration(ms: number): string {
  return parseMs(ms);
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
