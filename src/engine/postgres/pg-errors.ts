import { LeaseholdError, UnavailableError, InvalidArgumentError } from '../../core/errors.js';

// SQLSTATE classes and codes that mean "the database is not reachable or not accepting work now".
const UNAVAILABLE_SQLSTATE_PREFIXES = ['08', '53', '57P'];
// 57014: a statement cancelled, by statement_timeout (the database is too slow or stuck right
// now) or by an operator: either way the caller should retry later.
const UNAVAILABLE_SQLSTATES = new Set(['40001', '40P01', '55P03', '25006', '57014']);
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
  // The client's query_timeout: the server did not answer in time (silent, or overloaded).
  /Query read timeout/i,
];
/**
 * A statement that reached a server that cannot take it now, after a failover or during one: a
 * standby or a primary being demoted (25006, read-only: "cannot execute ... in a read-only
 * transaction / during recovery"), or a server shutting down, restarting or in recovery
 * (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now). The connection points
 * at the wrong server: it must not serve another statement (decision 0224).
 */
const WRONG_SERVER_SQLSTATES = new Set(['25006', '57P01', '57P02', '57P03']);
/** The same, recognised by message when a wrapper lost the SQLSTATE. */
const WRONG_SERVER_MESSAGES = [
  /the database system is (shutting down|in recovery|starting up|not yet accepting connections)/i,
  /cannot execute \S+( \S+)* (in a read-only transaction|during recovery)/i,
];
/** What leaves a connection in an unknown state: it cannot be trusted with another statement. */
const IN_DOUBT_MESSAGES = [/Query read timeout/i, /Connection terminated/i, /connection error/i];

/** Failures before a statement could reach the server (no connection was made): it did not run. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);
const NOT_SENT_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /due to connection timeout/i,
  /Cannot use a pool after calling end/i,
];

/**
 * Whether a failed statement certainly did not commit. An ERROR from the server aborts the
 * statement's transaction; a failure to connect never sent it. Anything else (a connection
 * reset or closed mid-statement, a FATAL that ends the session, a client-side timeout) may come
 * after the server committed: the outcome is unknown (decision 0220).
 */
export function outcomeKnown(error: unknown): boolean {
  const err = error as { code?: unknown; message?: unknown; severity?: unknown };
  if (err?.severity === 'ERROR') return true;
  if (typeof err?.code === 'string' && NOT_SENT_CODES.has(err.code)) return true;
  const message = typeof err?.message === 'string' ? err.message : '';
  return NOT_SENT_MESSAGES.some((re) => re.test(message));
}

/**
 * Turns a driver error into a LeaseholdError; leaves LeaseholdErrors as they are. An unavailable
 * error whose statement may have committed says so: `details.outcome` is `'unknown'`.
 */
export function mapPgError(error: unknown, operation: string): LeaseholdError {
  if (error instanceof LeaseholdError) return error;
  const err = error as { code?: string; message?: string };
  const code = typeof err?.code === 'string' ? err.code : '';
  const message = typeof err?.message === 'string' ? err.message : String(error);
  if (
    NETWORK_CODES.has(code) ||
    UNAVAILABLE_SQLSTATES.has(code) ||
    UNAVAILABLE_SQLSTATE_PREFIXES.some((p) => code.startsWith(p)) ||
    CONNECTION_MESSAGES.some((re) => re.test(message)) ||
    WRONG_SERVER_MESSAGES.some((re) => re.test(message))
  ) {
    if (outcomeKnown(error))
      return new UnavailableError(`${operation}: database unavailable (${code || message})`, error);
    return new UnavailableError(
      `${operation}: database unavailable (${code || message}); the statement's outcome is unknown (it may have committed)`,
      error,
      { outcome: 'unknown' },
    );
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

/**
 * True when the connection that raised `error` is lost or in an unknown state (a client-side
 * timeout, a network error): it must be dropped, not reused or sent a ROLLBACK.
 */
export function isConnectionInDoubt(error: unknown): boolean {
  const err = error as { code?: string; message?: string };
  const code = typeof err?.code === 'string' ? err.code : '';
  const message = typeof err?.message === 'string' ? err.message : '';
  return (
    NETWORK_CODES.has(code) ||
    code.startsWith('08') ||
    IN_DOUBT_MESSAGES.some((re) => re.test(message))
  );
}

/**
 * True when `error` says the statement reached a server that cannot take writes now: a standby,
 * a primary being demoted, or a server shutting down or in recovery (a failover under way).
 * Mapped to `unavailable` like any outage; the connection must be discarded, since through a
 * proxy or a DNS name the next connection reaches the new primary and this one never will.
 */
export function isWrongServer(error: unknown): boolean {
  const err = error as { code?: string; message?: string };
  const code = typeof err?.code === 'string' ? err.code : '';
  const message = typeof err?.message === 'string' ? err.message : '';
  return WRONG_SERVER_SQLSTATES.has(code) || WRONG_SERVER_MESSAGES.some((re) => re.test(message));
}

/** Whether the connection that raised `error` must be dropped rather than given back to a pool. */
export function mustDiscardConnection(error: unknown): boolean {
  return isConnectionInDoubt(error) || isWrongServer(error);
}
