/**
 * Slot arithmetic. A schedule's slots are the instants at which it is due; a slot is identified
 * by its start instant, and every instance must compute the same instants from the same
 * options, whenever it started. So:
 * - `every` slots are aligned to the Unix epoch (multiples of the period since 1970-01-01 UTC):
 *   `every: '1h'` is due at the top of each UTC hour on every instance.
 * - `cron` slots come from croner (decision 0102) in an explicit time zone, UTC by default, so
 *   that two instances configured with different local zones still agree on every slot.
 * Pure functions of time: no clock, no I/O.
 */
import { Cron } from 'croner';
import { InvalidArgumentError } from '../core/errors.js';

export interface SlotSeries {
  /** Human description, e.g. `every 1s` or `cron "0 3 * * *" (UTC)`. */
  readonly description: string;
  /** The first slot at or after `at`; null when the series has ended. */
  firstAtOrAfter(at: Date): Date | null;
  /** The newest slot at or before `at`; null when there is none. */
  latestAtOrBefore(at: Date): Date | null;
}

/** Slots every `everyMs`, aligned to the Unix epoch. */
export function everySlots(everyMs: number, description = `every ${everyMs} ms`): SlotSeries {
  return {
    description,
    firstAtOrAfter: (at) => new Date(Math.ceil(at.getTime() / everyMs) * everyMs),
    latestAtOrBefore: (at) => new Date(Math.floor(at.getTime() / everyMs) * everyMs),
  };
}

/**
 * Slots of a cron expression (5 fields, or 6 with seconds first; croner's nicknames such as
 * `@hourly` too). Throws InvalidArgumentError naming `cron` or `timezone`.
 */
export function cronSlots(expression: string, timezone = 'UTC'): SlotSeries {
  if (typeof expression !== 'string' || expression.trim() === '')
    throw new InvalidArgumentError('cron', 'must be a cron expression such as "*/5 * * * *"');
  if (typeof timezone !== 'string' || timezone === '')
    throw new InvalidArgumentError('timezone', 'must be an IANA time zone such as "Europe/Paris"');
  let cron: Cron;
  try {
    // paused: croner is used for its arithmetic only; it never schedules anything itself.
    cron = new Cron(expression, { paused: true, timezone, mode: '5-or-6-parts' });
  } catch (error) {
    throw new InvalidArgumentError('cron', `"${expression}" is not valid: ${message(error)}`);
  }
  try {
    cron.nextRun(new Date(0));
  } catch (error) {
    // croner reports an unknown zone only when it first converts a date.
    throw new InvalidArgumentError('timezone', `"${timezone}" is not usable: ${message(error)}`);
  }
  return {
    description: `cron "${expression}" (${timezone})`,
    // croner's nextRun is strictly after its argument and previousRuns strictly before; slots
    // fall on whole seconds, so one millisecond either side makes both inclusive.
    firstAtOrAfter: (at) => cron.nextRun(new Date(at.getTime() - 1)),
    latestAtOrBefore: (at) => cron.previousRuns(1, new Date(at.getTime() + 1))[0] ?? null,
  };
}

/** The slot after `slot`. */
export function slotAfter(series: SlotSeries, slot: Date): Date | null {
  return series.firstAtOrAfter(new Date(slot.getTime() + 1));
}

/**
 * The shortest gap between consecutive slots among the `samples` slots from `from`: exact for
 * `every`, a sample for cron (its gaps vary: month ends, DST). Null when fewer than two slots
 * remain.
 */
export function shortestGapMs(series: SlotSeries, from: Date, samples = 24): number | null {
  let previous = series.firstAtOrAfter(from);
  let shortest: number | null = null;
  for (let i = 0; previous && i < samples; i++) {
    const next = slotAfter(series, previous);
    if (!next) break;
    const gap = next.getTime() - previous.getTime();
    shortest = shortest === null ? gap : Math.min(shortest, gap);
    previous = next;
  }
  return shortest;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
