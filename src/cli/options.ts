import { InvalidArgumentError } from 'commander';
import { toMilliseconds, type DurationBounds } from '../core/duration.js';
import { isLeaseholdError } from '../core/errors.js';

/** A commander option parser for a bounded integer; commander prints its message and exits 1. */
export function parseIntegerOption(flag: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${flag} must be an integer from ${min} to ${max}, got "${value}"`,
      );
    }
    return n;
  };
}

/** A commander option parser for a duration (`30s`, `1500`), checked before anything connects. */
export function parseDurationOption(flag: string, bounds: DurationBounds = {}) {
  return (value: string): number => {
    try {
      return toMilliseconds(flag, value, bounds);
    } catch (error) {
      if (isLeaseholdError(error)) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}
