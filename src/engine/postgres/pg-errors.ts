import { LeaseholdError, UnavailableError, InvalidArgumentError } from '../../core/errors.js';

// SQLSTATE classes and codes that mean "the database is not reachable or not accepting work now".
const UNAVAILABLE_SQLSTATE_PREFIXES = ['08', '53', '57P'];
const UNAVAILABLE_SQLSTATES = new Set(['40001', '40P01', '55P03', '25006']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);
const CONNECTION_MESSAGES = [
  /Connection terminated/i,
  /connection timeout/i,
  /Client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /Client was closed/i,
  /Cannot use a pool after calling end/i,
];

/** Turns a driver error into a LeaseholdError; leaves LeaseholdErrors as they are. */
export function mapPgError(error: unknown, operation: string): LeaseholdError {
  if (error instanceof LeaseholdError) return error;
  const err = error as { code?: string; message?: string };
  const code = typeof err?.code === 'string' ? err.code : '';
  const message = typeof err?.message === 'string' ? err.message : String(error);
  if (
    NETWORK_CODES.has(code) ||
    UNAVAILABLE_SQLSTATES.has(code) ||
    UNAVAILABLE_SQLSTATE_PREFIXES.some((p) => code.startsWith(p)) ||
    CONNECTION_MESSAGES.some((re) => re.test(message))
  ) {
    return new UnavailableError(`${operation}: database unavailable (${code || message})`, error);
  }
  // 22xxx: data exceptions such as a value out of range: the input was wrong, not the database.
  if (code.startsWith('22')) return new InvalidArgumentError(operation, message);
  return new LeaseholdError(
    'internal',
    `${operation}: ${message}`,
    { sqlstate: code },
    { cause: error },
  );
}
