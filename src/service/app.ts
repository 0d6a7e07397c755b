/**
 * Builds the standalone HTTP service as a Fastify instance that never listens (server.ts does),
 * so tests drive it with `inject()`. The service is stateless apart from the database: any
 * number of instances can run behind a load balancer on one PostgreSQL.
 *
 * The routes, hooks and handlers are the plugin's (fastify-plugin.ts), registered here at the
 * root; what stays here is what belongs to the server: its logger, timeouts, and the answers to
 * requests no route sees (an undecodable URL, a malformed request line).
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Leasehold } from '../leasehold.js';
import type { TypedEvents } from '../runtime/events.js';
import type { ApiKeyConfig, HashedApiKey } from './auth.js';
import type { ServiceEventMap } from './context.js';
import { clientErrorHandler } from './client-errors.js';
import { DEFAULT_BODY_LIMIT, leaseholdPlugin } from './fastify-plugin.js';
import { sendError } from './http-errors.js';
import { requireRouteScopes } from './route-scopes.js';
import { applySecurityHeaders } from './security-headers.js';

export { DEFAULT_BODY_LIMIT } from './fastify-plugin.js';

export interface BuildAppOptions {
  lh: Leasehold;
  /**
   * API keys, plain or already hashed (`hashApiKeys`); none means auth is off (server.ts refuses
   * that on a public address). Only their SHA-256 digests are kept.
   */
  apiKeys?: readonly (ApiKeyConfig | HashedApiKey)[];
  /** A pino logger for requests and errors; silent when omitted. */
  logger?: FastifyServerOptions['loggerInstance'];
  /** Largest accepted request body in bytes (default 64 KiB). */
  bodyLimit?: number;
  instanceId?: string;
  events?: TypedEvents<ServiceEventMap>;
  /**
   * Every request is answered within this long: past it, 503 `unavailable` with Retry-After
   * (reply-deadline.ts). What bounds a request when the database goes silent. `startServer`
   * (and so `leasehold serve`) sets 1.5 s; an app built alone has none unless given one.
   */
  replyTimeoutMs?: number;
}

/**
 * What the service needs of the Fastify server it builds for itself (here, and inside the
 * Express adapter): long enough route parameters, and its error shape for a URL that cannot be
 * decoded (`/%`), which is refused before routing.
 */
export const SERVICE_SERVER_OPTIONS = {
  routerOptions: { maxParamLength: 200 },
  frameworkErrors: (error, request, reply) => {
    applySecurityHeaders(reply.raw);
    sendError(reply, error, request);
  },
} as const satisfies FastifyServerOptions;

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Prototype tricks in JSON bodies are rejected by the parser itself (json-body.ts adds a
    // nesting limit).
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    // Slow or stalled clients: the whole request must arrive within 10 s, and a socket silent
    // for a minute mid-request is closed (SSE streams write a keepalive every 15 s).
    requestTimeout: 10_000,
    connectionTimeout: 60_000,
    ...SERVICE_SERVER_OPTIONS,
    clientErrorHandler,
  });
  // The plugin guards its own routes; this guards the root too, so a route added to the
  // standalone app beside the plugin's must also declare its scope (route-scopes.ts).
  requireRouteScopes(app);
  await app.register(leaseholdPlugin, {
    leasehold: options.lh,
    // No keys: auth is off, as `leasehold serve` on loopback has always had it.
    auth: options.apiKeys && options.apiKeys.length > 0 ? { apiKeys: options.apiKeys } : false,
    bodyLimit: options.bodyLimit,
    instanceId: options.instanceId,
    events: options.events,
    replyTimeoutMs: options.replyTimeoutMs,
  });
  return app;
}
