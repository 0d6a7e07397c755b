import { InvalidArgumentError } from 'commander';

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
