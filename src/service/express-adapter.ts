/**
 * `leasehold/express`: the HTTP service as a Connect-style `(req, res, next)` handler, for
 * Express, Connect and plain `node:http` servers (decision 0262):
 *
 *   const leasehold = await leaseholdMiddleware({ leasehold: lh, auth: { apiKeys } });
 *   expressApp.use('/leasehold', leasehold);      // before express.json()
 *   // or: http.createServer(leaseholdMiddleware({ ..., basePath: '/leasehold' }) + your handler)
 *
 * Inside is a Fastify app of its own with the plugin at its root (fastify-plugin.ts), never
 * listening: each request is handed to its router (`routing(req, res)`, what Fastify offers for
 * this), which answers on the server's own response, streams included. Express is never
 * imported: the adapter speaks Node's request and response only.
 *
 * URLs: Express and Connect take the mount path off `req.url` and keep the client's URL in
 * `req.originalUrl`; the service routes `req.url`. A server that does not strip it (node:http)
 * names it in `basePath`. The page and the OpenAPI document use relative URLs, so neither needs
 * to know the mount path.
 *
 * Bodies: the service reads and checks its own JSON (its size and nesting limits, prototype
 * keys refused). Mounted after a body parser, it would find the body gone: such a request is
 * answered 500 with a message saying so, rather than left waiting.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { InvalidArgumentError, type ErrorCode } from '../core/errors.js';
import { SERVICE_SERVER_OPTIONS } from './app.js';
import { leaseholdPlugin, type LeaseholdPluginOptions } from './fastify-plugin.js';
import { errorBody, HTTP_STATUS } from './http-errors.js';
import { applySecurityHeaders } from './security-headers.js';

export type {
  AuthorizeRequest,
  LeaseholdAuth,
  Principal,
  Scope,
  ApiKeyConfig,
  HashedApiKey,
} from './fastify-plugin.js';
export { hashApiKeys } from './fastify-plugin.js';

export interface LeaseholdMiddlewareOptions extends Omit<
  LeaseholdPluginOptions,
  'openapiServerUrl'
> {
  /**
   * Only for servers that do not take a mount path off `req.url` (plain `node:http`): the path
   * the service answers under (`/leasehold`). Requests outside it go to `next()`, or get a 404
   * when there is none. Leave it unset under `app.use('/leasehold', handler)`.
   */
  basePath?: string;
  /** A pino logger for requests and errors; silent when omitted. */
  logger?: FastifyServerOptions['loggerInstance'];
}

/** A Connect-style handler, usable by `app.use(path, handler)` and `http.createServer`. */
export interface LeaseholdMiddleware {
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  /** The Fastify app inside (its routes, `inject()` for tests). */
  readonly app: FastifyInstance;
  /** Closes the app inside (stops its metrics observing the Leasehold). */
  close(): Promise<void>;
}

type MountedRequest = IncomingMessage & { originalUrl?: string; _body?: boolean };

export async function leaseholdMiddleware(
  options: LeaseholdMiddlewareOptions,
): Promise<LeaseholdMiddleware> {
  const basePath = normalizedBasePath(options.basePath);
  const { logger, basePath: _basePath, ...pluginOptions } = options;
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    ...SERVICE_SERVER_OPTIONS,
  });
  // Relative to the document (at <mount>/docs/json): the mount path is known only per request.
  await app.register(leaseholdPlugin, { ...pluginOptions, openapiServerUrl: '..' });
  await app.ready();

  const handler = (
    req: IncomingMessage,
    res: ServerResponse,
    next?: (error?: unknown) => void,
  ): void => {
    const request = req as MountedRequest;
    if (basePath !== undefined && !stripBasePath(request, basePath)) {
      if (next) return next();
      return answer(res, 'not_found', `no route ${req.method} ${req.url}`);
    }
    if (request._body === true || request.readableEnded)
      return answer(
        res,
        'internal',
        'the request body was read before leasehold saw it: mount leasehold before body parsers ' +
          '(express.json() and the like)',
      );
    const slashed = docsWithTrailingSlash(request);
    if (slashed !== undefined) {
      res.writeHead(308, { location: slashed }).end();
      return;
    }
    app.routing(req, res);
  };
  return Object.assign(handler, { app, close: () => app.close() });
}

function normalizedBasePath(basePath: string | undefined): string | undefined {
  if (basePath === undefined) return undefined;
  if (typeof basePath !== 'string' || !basePath.startsWith('/') || /[?#]/.test(basePath))
    throw new InvalidArgumentError('basePath', 'must be a path starting with "/", like /leasehold');
  const trimmed = basePath.replace(/\/+$/, '');
  return trimmed === '' ? undefined : trimmed;
}

/** Takes `basePath` off `req.url` as Express would; false when the URL is outside it. */
function stripBasePath(request: MountedRequest, basePath: string): boolean {
  const url = request.url ?? '/';
  if (!url.startsWith(basePath)) return false;
  const rest = url.slice(basePath.length);
  if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') return false;
  request.originalUrl ??= url;
  request.url = rest === '' || rest[0] === '?' ? `/${rest}` : rest;
  return true;
}

/**
 * Swagger UI's page names its files from its own URL when that ends in a slash, and from the
 * app's root otherwise, which under a mount path is the wrong place: `<mount>/docs` is sent to
 * `docs/` (the plugin in a Fastify app knows its prefix and needs no such help).
 */
function docsWithTrailingSlash(request: MountedRequest): string | undefined {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  if ((queryAt < 0 ? url : url.slice(0, queryAt)) !== '/docs') return undefined;
  if (request.originalUrl === undefined || request.originalUrl === url) return undefined;
  return `./docs/${queryAt < 0 ? '' : url.slice(queryAt)}`;
}

/** An answer in the service's error shape, for requests the app inside never sees. */
function answer(res: ServerResponse, code: ErrorCode, message: string): void {
  if (res.headersSent) return void res.end();
  applySecurityHeaders(res);
  const body = JSON.stringify(errorBody(code, message));
  res.writeHead(HTTP_STATUS[code], {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
