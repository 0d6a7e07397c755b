/**
 * The one table of stable error codes. Every error leasehold throws on purpose carries one of
 * these codes; the HTTP service and the CLI each map from this table in a single file. A code,
 * once published, keeps its meaning: add new codes, never repurpose old ones.
 */
export const ERROR_CODES = {
  invalid_argument: 'A parameter is missing, of the wrong type or out of range.',
  lease_held: 'The resource is leased by another holder whose lease has not expired.',
  lease_lost: 'The caller no longer holds the lease: it expired, was released or was taken over.',
  stale_token: 'A fencing token older than the newest one seen for its scope was presented.',
  task_done: 'The task or job has already finished and cannot change any more.',
  not_found: 'No such lease, job or other entity.',
  conflict: 'The request conflicts with the current state.',
  unavailable: 'The database cannot be reached right now; retry later.',
  timeout: 'The operation did not complete within its timeout.',
  job_failed: 'The awaited job ended without a result: it is dead or was cancelled.',
  aborted: 'The operation was cancelled by its AbortSignal.',
  unsupported: 'The engine or connection mode does not support this operation.',
  closed: 'The instance has been closed.',
  unauthorized: 'No valid API key was presented.',
  forbidden: "The API key's scope does not allow this operation.",
  payload_too_large: 'The request body is larger than the configured limit.',
  unsupported_media_type: 'The request body is not JSON.',
  internal: 'An unexpected error; the message says more.',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetails {
  readonly [key: string]: unknown;
}

/** Base of every error leasehold throws on purpose. `code` is stable; `message` is for humans. */
export class LeaseholdError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

export class InvalidArgumentError extends LeaseholdError {
  /** The option or field that was rejected, e.g. `ttl` or `resource`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super('invalid_argument', `${field}: ${message}`, { field });
    this.field = field;
  }

  /** The same error for a field nested under `prefix` (`jobs[3].` + `maxAttempts`). */
  within(prefix: string): InvalidArgumentError {
    const reason = this.message.slice(this.field.length + 2); // without the "field: " prefix
    return new InvalidArgumentError(`${prefix}${this.field}`, reason);
  }
}

export class LeaseHeldError extends LeaseholdError {
  constructor(resource: string, holder: string, expiresAt: Date) {
    super(
      'lease_held',
      `resource "${resource}" is held by "${holder}" until ${expiresAt.toISOString()}`,
      {
        resource,
        holder,
        expiresAt: expiresAt.toISOString(),
      },
    );
  }
}

export class LeaseLostError extends LeaseholdError {
  constructor(resource: string, reason: string) {
    super('lease_lost', `lease on "${resource}" is lost: ${reason}`, { resource, reason });
  }
}

export class StaleTokenError extends LeaseholdError {
  constructor(scope: string, token: number, newest: number) {
    super('stale_token', `token ${token} for scope "${scope}" is older than ${newest}`, {
      scope,
      token,
      newest,
    });
  }
}

export class NotFoundError extends LeaseholdError {
  constructor(entity: string, id: string | number) {
    super('not_found', `${entity} ${JSON.stringify(id)} does not exist`, { entity, id });
  }
}

export class ConflictError extends LeaseholdError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('conflict', message, details);
  }
}

export class TaskDoneError extends LeaseholdError {
  constructor(id: string | number, status: string) {
    super('task_done', `job ${id} is already ${status}`, { id, status });
  }
}

/**
 * `details.outcome === 'unknown'`: the statement may have been applied (the connection was lost
 * after it was sent); retrying something that is not idempotent may apply it twice.
 */
export class UnavailableError extends LeaseholdError {
  constructor(message: string, cause?: unknown, details: ErrorDetails = {}) {
    super('unavailable', message, details, { cause });
  }
}

export class TimeoutError extends LeaseholdError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('timeout', message, details);
  }
}

/**
 * A job's handler ran past its `timeout`: the reason its signal fires, and the error its attempt
 * fails with (retried per the worker's policy like any other failure).
 */
export class JobTimeoutError extends TimeoutError {
  constructor(jobId: number, timeoutMs: number) {
    super(`job ${jobId} timed out after ${timeoutMs} ms`, { jobId, timeoutMs });
  }
}

/**
 * `waitFor` gave up: the job had not finished when its `timeout` passed. Not a failure of the
 * job, which may still complete; `details.status` is its status when the wait ended.
 */
export class WaitTimeoutError extends TimeoutError {
  readonly jobId: number;
  readonly status: string;
  constructor(jobId: number, status: string, timeoutMs: number) {
    super(`job ${jobId} is still ${status} after waiting ${timeoutMs} ms`, {
      jobId,
      status,
      timeoutMs,
    });
    this.jobId = jobId;
    this.status = status;
  }
}

/**
 * The job `waitFor` awaited ended without a result: `status` is `dead` (its attempts ran out or
 * it failed for good) or `cancelled`, and `lastError` is the error of its last failed attempt
 * (null when it never failed, e.g. cancelled before it ran).
 */
export class JobFailedError extends LeaseholdError {
  readonly jobId: number;
  readonly status: 'dead' | 'cancelled';
  readonly lastError: string | null;
  constructor(jobId: number, status: 'dead' | 'cancelled', lastError: string | null) {
    super('job_failed', `job ${jobId} is ${status}${lastError === null ? '' : `: ${lastError}`}`, {
      jobId,
      status,
      lastError,
    });
    this.jobId = jobId;
    this.status = status;
    this.lastError = lastError;
  }
}

export class AbortedError extends LeaseholdError {
  constructor(message = 'the operation was aborted', cause?: unknown) {
    super('aborted', message, {}, { cause });
  }
}

export class UnsupportedError extends LeaseholdError {
  constructor(message: string) {
    super('unsupported', message);
  }
}

export class ClosedError extends LeaseholdError {
  constructor(what: string) {
    super('closed', `${what} has been closed`);
  }
}

export function isLeaseholdError(error: unknown, code?: ErrorCode): error is LeaseholdError {
  return error instanceof LeaseholdError && (code === undefined || error.code === code);
}
