/**
 * The one place where error codes become HTTP answers. Every error body is
 * `{ "error": { "code", "message", "details"? } }` with a code from core/errors.ts; Fastify's
 * own errors (validation, body too large, bad JSON, unknown route) are folded into the same
 * codes so a client needs one parser. A 5xx never carries a stack trace.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isLeaseholdError, type ErrorCode, type LeaseholdError } from '../core/errors.js';

export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  lease_held: 409,
  lease_lost: 409,
  stale_token: 409,
  task_done: 409,
  job_failed: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  unsupported: 501,
  unavailable: 503,
  closed: 503,
  timeout: 503,
  aborted: 503,
};

/** Seconds a client should wait before retrying after a 503. */
export const RETRY_AFTER_SECONDS = 1;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

export function errorBody(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
): ErrorBody {
  return { error: details ? { code, message, details } : { code, message } };
}

/** Maps any thrown error to a status and a body; unknown errors become a bare 500. */
export function toHttpError(error: unknown): { status: number; body: ErrorBody } {
  if (isLeaseholdError(error)) return fromLeaseholdError(error);
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown[] };
  if (fastifyError.validation) {
    return {
      status: 400,
      body: errorBody('invalid_argument', validationMessage(fastifyError)),
    };
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        body: errorBody('payload_too_large', 'the request body is too large'),
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: errorBody('unsupported_media_type', 'send the body as application/json'),
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: errorBody('invalid_argument', 'the body is not valid JSON') };
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    // Other client errors Fastify raises (malformed URL, bad header): a 4xx with our shape.
    return {
      status,
      body: errorBody('invalid_argument', fastifyError.message ?? 'bad request'),
    };
  }
  return { status: 500, body: errorBody('internal', 'an unexpected error occurred') };
}

function fromLeaseholdError(error: LeaseholdError): { status: number; body: ErrorBody } {
  const status = HTTP_STATUS[error.code];
  // Internal details (SQLSTATE, causes) stay in the log, not in the answer; but a request whose
  // statement may have committed says so, or a client would retry a create blindly (0220).
  if (status >= 500 && error.details.outcome === 'unknown')
    return {
      status,
      body: errorBody(
        error.code,
        'the database connection was lost after the request was sent; its outcome is unknown (it may have been applied)',
        { outcome: 'unknown' },
      ),
    };
  // A failover quarantine is no internal: the client is told why and for how long (0225).
  if (status >= 500 && error.details.reason === 'failover_quarantine')
    return {
      status,
      body: errorBody(
        error.code,
        'a database failover just happened: no new term is granted until its quarantine ends',
        { reason: 'failover_quarantine', retryAfterMs: error.details.retryAfterMs },
      ),
    };
  if (status >= 500) return { status, body: errorBody(error.code, publicMessage(error)) };
  const details = Object.keys(error.details).length > 0 ? { ...error.details } : undefined;
  return { status, body: errorBody(error.code, error.message, details) };
}

function publicMessage(error: LeaseholdError): string {
  if (error.code === 'unavailable' || error.code === 'closed' || error.code === 'timeout')
    return 'the database is unavailable; retry later';
  return error.code === 'internal' ? 'an unexpected error occurred' : error.message;
}

interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** One readable line naming the field: `body.ttlSeconds: must be integer`. */
function validationMessage(error: Partial<FastifyError> & { validation?: unknown[] }): string {
  const issues = (error.validation ?? []) as ValidationIssue[];
  const where = error.validationContext ?? 'body';
  // The `schema is false` twin of an additionalProperties issue says less; prefer the latter.
  const issue = issues.find((i) => i.keyword !== 'boolean') ?? issues[0] ?? {};
  const path = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const join = (field: string): string => (path ? `${path}.${field}` : field);
  const list = (value: unknown): string | undefined =>
    Array.isArray(value) ? String(value[0]) : typeof value === 'string' ? value : undefined;
  const extra = list(issue.params?.additionalProperties);
  if (extra) return `${where}.${join(extra)}: is not a known field`;
  const missing = list(issue.params?.requiredProperties) ?? list(issue.params?.missingProperty);
  if (missing) return `${where}.${join(missing)}: is required`;
  const message = issue.message ?? 'is invalid';
  return path ? `${where}.${path}: ${message}` : `${where}: ${message}`;
}

/**
 * Seconds a client should wait before retrying a 503: the error's own `retryAfterMs` when it
 * knows one (a failover quarantine says when it ends, decision 0225), rounded up, else 1.
 */
export function retryAfterSeconds(error: unknown): number {
  const details = (error as { details?: Record<string, unknown> } | null)?.details;
  const ms = details?.['retryAfterMs'];
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return RETRY_AFTER_SECONDS;
  return Math.max(RETRY_AFTER_SECONDS, Math.ceil(ms / 1000));
}

export function sendError(reply: FastifyReply, error: unknown, request?: FastifyRequest): void {
  const { status, body } = toHttpError(error);
  if (status >= 500) {
    request?.log.error({ err: error }, 'request failed');
    if (status === 503) void reply.header('retry-after', String(retryAfterSeconds(error)));
  }
  void reply.code(status).send(body);
}
