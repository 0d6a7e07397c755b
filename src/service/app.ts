/**
 * Builds the HTTP service as a Fastify instance that never listens (server.ts does), so tests
 * drive it with `inject()`. The service is stateless apart from the database: any number of
 * instances can run behind a load balancer on one PostgreSQL.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { InvalidArgumentError } from '../core/errors.js';
import type { Leasehold } from '../leasehold.js';
import { TypedEvents } from '../runtime/events.js';
import { defaultHolderId } from '../runtime/identity.js';
import {
  ApiKeyAuth,
  requireScope,
  type ApiKeyConfig,
  type HashedApiKey,
  type Principal,
} from './auth.js';
import type { ServiceContext, ServiceEventMap } from './context.js';
import { clientErrorHandler } from './client-errors.js';
import { sendError } from './http-errors.js';
import { jsonBodyParser } from './json-body.js';
import {
  applySecurityHeaders,
  DOCS_CONTENT_SECURITY_POLICY,
  securityHeaders,
} from './security-headers.js';
import { openapiOptions } from './openapi.js';
import { registerPublic, requireRouteScopes } from './route-scopes.js';
import { validatorCompiler } from './validation.js';
import { replyDeadline } from './reply-deadline.js';
import { healthRoutes } from './routes/health.js';
import { leaseRoutes } from './routes/leases.js';
import { taskRoutes } from './routes/tasks.js';
import { generatorRoutes } from './routes/generator.js';
import { eventRoutes } from './routes/events.js';
import { workerRoutes } from './routes/workers.js';
import { jobRoutes } from './routes/jobs.js';
import { queueRoutes } from './routes/queues.js';
import { queueJobRoutes } from './routes/queue-jobs.js';
import { flowRoutes } from './routes/flows.js';
import { leaderRoutes } from './routes/leaders.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { createMetrics, metricsRoutes } from './metrics.js';
import { traceRequests } from './request-tracing.js';

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

export const DEFAULT_BODY_LIMIT = 64 * 1024;

function replyTimeoutMs(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError('replyTimeoutMs', `must be a positive integer, got ${value}`);
  return value;
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const auth = new ApiKeyAuth(options.apiKeys ?? []);
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
    routerOptions: { maxParamLength: 200 },
    // A URL that cannot be decoded (`/%`) is refused before routing: answer it in our shape.
    frameworkErrors: (error, request, reply) => {
      applySecurityHeaders(reply.raw);
      sendError(reply, error, request);
    },
    clientErrorHandler,
  });
  // Before any route: a route that declares no scope makes the build throw (route-scopes.ts).
  requireRouteScopes(app);
  traceRequests(app, options.lh);
  securityHeaders(app);
  if (options.replyTimeoutMs !== undefined)
    replyDeadline(app, replyTimeoutMs(options.replyTimeoutMs));
  // Bodies are validated as sent (no coercion, no silent removal of unknown fields); params and
  // query strings are converted from their canonical text only (validation.ts).
  app.setValidatorCompiler(validatorCompiler);
  // JSON only: a text/plain body is answered 415, not parsed into a string.
  app.removeContentTypeParser('text/plain');
  jsonBodyParser(app);
  app.setErrorHandler((error, request, reply) => sendError(reply, error, request));
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: { code: 'not_found', message: `no route ${request.method} ${request.url}` } }),
  );

  app.decorateRequest('principal', null as unknown as Principal);
  // Callback hooks on every request (here, security-headers.ts, metrics.ts): an async hook
  // costs a promise and a microtask turn per request.
  app.addHook('onRequest', (request, _reply, done) => {
    const scope = request.routeOptions.config.scope;
    // An unknown URL reaches no route and no data: anyone gets its 404.
    if (scope === 'public' || (scope === undefined && request.is404)) return done();
    try {
      request.principal = auth.authenticate(request);
      // Every route has a scope (route-scopes.ts); were one ever missing, it would need admin.
      requireScope(request.principal, scope ?? 'admin');
    } catch (error) {
      return done(error as Error);
    }
    done();
  });

  await app.register(swagger, openapiOptions(auth.enabled));
  // The API documentation is public: it describes the routes, it holds no data.
  await registerPublic(app, swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
  });

  const ctx: ServiceContext = {
    lh: options.lh,
    events: options.events ?? new TypedEvents<ServiceEventMap>(),
    instanceId: options.instanceId ?? defaultHolderId(),
  };
  const metrics = createMetrics(ctx.lh);
  ctx.metrics = metrics;
  // The Leasehold may outlive the app (tests, embedding): stop listening to its engine on close.
  app.addHook('onClose', (_app, done) => {
    metrics.detach();
    done();
  });
  metricsRoutes(app, metrics);
  healthRoutes(app, ctx);
  leaseRoutes(app, ctx);
  taskRoutes(app, ctx);
  generatorRoutes(app, ctx);
  workerRoutes(app, ctx);
  jobRoutes(app, ctx);
  queueRoutes(app, ctx);
  queueJobRoutes(app, ctx);
  flowRoutes(app, ctx);
  leaderRoutes(app, ctx);
  await dashboardRoutes(app);
  eventRoutes(app, ctx);
  return app;
}
