/**
 * Failover-safe tokens, the engine's side (decision 0225). A statement that grants a new term
 * fails with SQLSTATE LHE01 when the server's history (timeline, system identifier) is not the
 * one the newest epoch records: a promoted standby, a restored backup. `withEpoch` then records
 * the next epoch, in a statement of its own that commits durably before any token of the epoch
 * exists, and runs the statement again. During the epoch's quarantine the statement fails with
 * LHQ01, which becomes an `unavailable` error carrying `reason: 'failover_quarantine'` and
 * `retryAfterMs`: every caller already waits and retries on `unavailable`.
 */
import { LeaseholdError, UnavailableError } from '../../core/errors.js';
import type { PgContext } from './context.js';
import { DURABLE_COMMIT } from './durable-commit.js';
import { BEGIN_EPOCH } from './epoch-sql.js';

export const NEW_EPOCH_SQLSTATE = 'LHE01';
export const QUARANTINE_SQLSTATE = 'LHQ01';

/** How many new epochs one call may meet (a second promotion between two tries, at most). */
const EPOCH_TRIES = 3;

function sqlstateOf(error: unknown): string | undefined {
  if (error instanceof LeaseholdError) {
    const fromDetails = error.details['sqlstate'];
    if (typeof fromDetails === 'string') return fromDetails;
    return sqlstateOf(error.cause);
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function detailOf(error: unknown): string | undefined {
  const cause = error instanceof Error ? error.cause : undefined;
  const detail = (cause as { detail?: unknown } | undefined)?.detail;
  return typeof detail === 'string' ? detail : undefined;
}

/** The error a caller sees while a new epoch's quarantine runs. */
export function quarantineError(operation: string, error: unknown): UnavailableError {
  const retryAfterMs = Math.max(1, Number(detailOf(error)) || 1000);
  return new UnavailableError(
    `${operation}: no new term is granted until the failover quarantine ends (in ${retryAfterMs} ms)`,
    error,
    { reason: 'failover_quarantine', retryAfterMs },
  );
}

/** Runs a statement that grants new terms, entering a new epoch first if the server has one. */
export async function withEpoch<T>(
  ctx: PgContext,
  operation: string,
  run: () => Promise<T>,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await run();
    } catch (error) {
      const sqlstate = sqlstateOf(error);
      if (sqlstate === QUARANTINE_SQLSTATE) throw quarantineError(operation, error);
      if (sqlstate !== NEW_EPOCH_SQLSTATE) throw error;
      if (tries >= EPOCH_TRIES)
        throw new UnavailableError(`${operation}: the server's history keeps changing`, error);
      await ctx.query('EpochBegin', BEGIN_EPOCH(ctx.quotedSchema, DURABLE_COMMIT), []);
    }
  }
}
