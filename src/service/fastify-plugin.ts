/**
 * `leasehold/fastify`: the whole HTTP service (API, event stream, metrics, OpenAPI document and
 * Swagger UI, dashboard) as a Fastify plugin, to mount under a prefix of your own app:
 *
 *   await app.register(leaseholdPlugin, { prefix: '/leasehold', leasehold: lh, auth: { apiKeys } });
 *
 * The plugin is encapsulated (no fastify-plugin wrapper): its hooks (security headers, auth,
 * reply deadline, metrics), error and not-found handlers, JSON parser, validator and body limit
 * apply to its own routes only, never to the app's other routes. `buildApp()` (app.ts) is
 * `Fastify(...)` with this plugin at the root (decision 0262).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { InvalidArgumentError } from '../core/errors.js';
import type { Leasehold } from '../leasehold.js';
import { TypedEvents } from '../runtime/events.js';
import { defaultHolderId } from '../runtime/identity.js';
import { requireScope, type Principal } from './auth.js';
import type { ServiceContext, ServiceEventMap } from './context.js';
import { sendError } from './http-errors.js';
import { jsonBodyParser } from './json-body.js';
import { createMetrics, metricsRoutes } from './metrics.js';
import { traceRequests } from './request-tracing.js';
import { openapiOptions } from './openapi.js';
import { replyDeadline } from './reply-deadline.js';
import { requestAuthenticator, type LeaseholdAuth } from './request-auth.js';
import { registerPublic, requireRouteScopes } from './route-scopes.js';
import { DOCS_CONTENT_SECURITY_POLICY, securityHeaders } from './security-headers.js';
import { validatorCompiler } from './validation.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { eventRoutes } from './routes/events.js';
import { flowRoutes } from './routes/flows.js';
import { generatorRoutes } from './routes/generator.js';
import { healthRoutes } from './routes/health.js';
import { jobExplorerRoutes } from './routes/job-explorer.js';
import { jobRoutes } from './routes/jobs.js';
import { leaderRoutes } from './routes/leaders.js';
import { leaseRoutes } from './routes/leases.js';
import { leaseTermRoutes } from './routes/lease-terms.js';
import { queueJobRoutes } from './routes/queue-jobs.js';
import { queueRoutes } from './routes/queues.js';
import { trendRoutes } from './routes/trends.js';
import { taskRoutes } from './routes/tasks.js';
import { workerRoutes } from './routes/workers.js';

export type { AuthorizeRequest, LeaseholdAuth } from './request-auth.js';
export type { Principal, Scope, ApiKeyConfig, HashedApiKey } from './auth.js';
export { hashApiKeys } from './auth.js';

export interface LeaseholdPluginOptions {
  leasehold: Leasehold;
  /**
   * Required, so that mounting the service never leaves it open by omission: `{ apiKeys }`,
   * `{ authorize(request) }` or `false` (request-auth.ts).
   */
  auth: LeaseholdAuth;
  /** Largest accepted request body in bytes on the plugin's routes (default 64 KiB). */
  bodyLimit?: number;
  instanceId?: string;
  events?: TypedEvents<ServiceEventMap>;
  /** Every request is answered within this long, else 503 (reply-deadline.ts); none if omitted. */
  replyTimeoutMs?: number;
  /**
   * The URL the OpenAPI document names in `servers`: the plugin's prefix by default (the
   * document's paths are then written without it). The Express adapter, which learns its mount
   * path only from requests, names `..`: relative to the document at `<mount>/docs/json`.
   */
  openapiServerUrl?: string;
}

export const DEFAULT_BODY_LIMIT = 64 * 1024;

function positiveInteger(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError(field, `must be a positive integer, got ${value}`);
  return value;
}

export const leaseholdPlugin: FastifyPluginAsync<LeaseholdPluginOptions> = async (
  instance,
  options,
) => {
  if (typeof options.leasehold !== 'object' || options.leasehold === null)
    throw new InvalidArgumentError('leasehold', 'must be a Leasehold (Leasehold.connect(...))');
  const authenticator = requestAuthenticator(options.auth);
  const bodyLimit = positiveInteger('bodyLimit', options.bodyLimit ?? DEFAULT_BODY_LIMIT);
  const replyTimeout =
    options.replyTimeoutMs === undefined
      ? undefined
      : positiveInteger('replyTimeoutMs', options.replyTimeoutMs);

  // Before any route: a route that declares no scope makes the build throw (route-scopes.ts).
  requireRouteScopes(instance);
  // A span per request when the Leasehold is instrumented (decision 0260): inside the plugin,
  // so a mounted service traces its own routes and none of the user's.
  traceRequests(instance, options.leasehold);
  // The server's body limit is the app's; the plugin's routes carry their own.
  instance.addHook('onRoute', (route) => {
    route.bodyLimit ??= bodyLimit;
  });
  securityHeaders(instance);
  if (replyTimeout !== undefined) replyDeadline(instance, replyTimeout);
  // Bodies are validated as sent (no coercion, no silent removal of unknown fields); params and
  // query strings are converted from their canonical text only (validation.ts).
  instance.setValidatorCompiler(validatorCompiler);
  // JSON only: a text/plain body is answered 415, not parsed into a string.
  instance.removeContentTypeParser('text/plain');
  jsonBodyParser(instance);
  instance.setErrorHandler((error, request, reply) => sendError(reply, error, request));
  instance.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: { code: 'not_found', message: `no route ${request.method} ${request.url}` } }),
  );

  instance.decorateRequest('principal', null as unknown as Principal);
  authenticationHook(instance, authenticator.authenticate);

  const prefix = instance.prefix;
  await instance.register(
    swagger,
    openapiOptions(authenticator.checks, options.openapiServerUrl ?? (prefix || '/')),
  );
  // The API documentation is public: it describes the routes, it holds no data. Its page names
  // its files from the prefix when asked without a trailing slash.
  await registerPublic(instance, swaggerUi, {
    routePrefix: '/docs',
    indexPrefix: prefix,
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
  });

  const ctx: ServiceContext = {
    lh: options.leasehold,
    events: options.events ?? new TypedEvents<ServiceEventMap>(),
    instanceId: options.instanceId ?? defaultHolderId(),
  };
  const metrics = createMetrics(ctx.lh);
  ctx.metrics = metrics;
  // The Leasehold may outlive the app (tests, embedding): stop listening to its engine on close.
  instance.addHook('onClose', (_app, done) => {
    metrics.detach();
    done();
  });
  metricsRoutes(instance, metrics);
  healthRoutes(instance, ctx);
  leaseRoutes(instance, ctx);
  taskRoutes(instance, ctx);
  generatorRoutes(instance, ctx);
  workerRoutes(instance, ctx);
  jobExplorerRoutes(instance, ctx);
  jobRoutes(instance, ctx);
  queueRoutes(instance, ctx);
  trendRoutes(instance, ctx);
  queueJobRoutes(instance, ctx);
  flowRoutes(instance, ctx);
  leaderRoutes(instance, ctx);
  leaseTermRoutes(instance, ctx);
  await dashboardRoutes(instance);
  eventRoutes(instance, ctx);
};

/**
 * Every request to a route that is not public is authenticated, then checked against the
 * route's scope. A callback hook, as elsewhere (an async hook costs a promise and a microtask
 * turn per request); only an async `authorize` of the app's makes it wait.
 */
function authenticationHook(
  instance: FastifyInstance,
  authenticate: (request: FastifyRequest) => Principal | Promise<Principal>,
): void {
  instance.addHook('onRequest', (request, _reply, done) => {
    const scope = request.routeOptions.config.scope;
    // An unknown URL reaches no route and no data: anyone gets its 404.
    if (scope === 'public' || (scope === undefined && request.is404)) return done();
    const admit = (principal: Principal): void => {
      try {
        request.principal = principal;
        // Every route has a scope (route-scopes.ts); were one ever missing, it would need admin.
        requireScope(principal, scope ?? 'admin');
      } catch (error) {
        return done(error as Error);
      }
      done();
    };
    let principal: Principal | Promise<Principal>;
    try {
      principal = authenticate(request);
    } catch (error) {
      return done(error as Error);
    }
    if (principal instanceof Promise) principal.then(admit, (error: Error) => done(error));
    else admit(principal);
  });
}
