/**
 * Every request is answered within `replyTimeoutMs`. A database that stops answering (a
 * partition, a frozen host) neither errors nor closes its sockets; the engine's statement, query
 * and pool timeouts bound each statement, but a request may wait for a pool slot, then for a
 * statement, then for another (a transaction, a coalesced list in flight). This deadline is the
 * one bound on the whole: past it the request is answered 503 `unavailable` with Retry-After, like
 * any outage. Whatever the handler does afterwards is dropped, log lines included: the caller has
 * its answer, and a late "reply already sent" says nothing an operator can act on.
 *
 * A 503 says the outcome is unknown: a statement still in flight may yet commit (a retried
 * acquire by the same holder gets its own lease back; a retried enqueue should carry a key).
 * Streams (the SSE route hijacks its reply) are past the deadline's reach once they start.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UnavailableError } from '../core/errors.js';
import { sendError } from './http-errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    replyTimer: NodeJS.Timeout | null;
    /** The deadline this request was given (0: none), for a long poll to extend. */
    replyTimeoutMs: number;
  }
}

/**
 * The service's deadline (`startServer`, `leasehold serve`): under the 2 s an outage answer may
 * take, with room for a healthy request on a busy machine. Requests queued behind one another
 * (many clients contending for one lease) share it, so an app embedded elsewhere chooses its own.
 */
export const DEFAULT_REPLY_TIMEOUT_MS = 1_500;

export function replyDeadline(app: FastifyInstance, timeoutMs: number): void {
  app.decorateRequest('replyTimer', null);
  app.decorateRequest('replyTimeoutMs', 0);
  // Callback hooks, as elsewhere: an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    request.replyTimeoutMs = timeoutMs;
    arm(request, reply, timeoutMs);
    done();
  });
  const clear = (request: FastifyRequest, _reply: unknown, done: () => void): void => {
    if (request.replyTimer) clearTimeout(request.replyTimer);
    request.replyTimer = null;
    done();
  };
  app.addHook('onResponse', clear);
  app.addHook('onRequestAbort', (request, done) => clear(request, undefined, done));
}

/**
 * A long poll (GET /api/jobs/:id/wait) waits `waitMs` on purpose: its deadline becomes the wait
 * plus the usual deadline, from now. Nothing to do on an app built without a deadline.
 */
export function extendReplyDeadline(
  request: FastifyRequest,
  reply: FastifyReply,
  waitMs: number,
): void {
  if (!request.replyTimer) return;
  clearTimeout(request.replyTimer);
  arm(request, reply, waitMs + request.replyTimeoutMs);
}

function arm(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): void {
  request.replyTimer = setTimeout(() => answerLate(request, reply, timeoutMs), timeoutMs);
  // An open request must not keep a closing process alive just for its deadline.
  request.replyTimer.unref();
}

function answerLate(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): void {
  request.replyTimer = null;
  if (reply.sent || reply.raw.headersSent) return;
  sendError(
    reply,
    new UnavailableError(`no answer from the database within ${timeoutMs} ms`),
    request,
  );
  const silent = request.log.child({}, { level: 'silent' });
  request.log = silent;
  reply.log = silent;
}
