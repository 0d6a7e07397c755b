/**
 * What the database refused, read from the driver error a LeaseholdError wraps (ctx.query maps
 * every driver error, pg-errors.ts). The job families retry or translate some refusals: a claim
 * that lost a race runs again (postgres-jobs.ts), a retry that met a live job of its key becomes
 * a ConflictError (postgres-job-admin.ts).
 */
import { LeaseholdError } from '../../core/errors.js';

/** The unique index or CHECK constraint a driver error violated, if any. */
export function violated(error: unknown): string | undefined {
  if (!(error instanceof LeaseholdError)) return undefined;
  const cause = error.cause as { code?: string; constraint?: string } | undefined;
  return cause?.code === '23505' || cause?.code === '23514' ? cause.constraint : undefined;
}

/** The database broke a deadlock by rolling this statement back (40P01). */
export function deadlocked(error: unknown): boolean {
  const cause = error instanceof LeaseholdError ? (error.cause as { code?: string }) : undefined;
  return cause?.code === '40P01';
}
