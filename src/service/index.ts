// `leasehold/server`: build the service to embed in your own Fastify server, or start it.
export { buildApp, DEFAULT_BODY_LIMIT, type BuildAppOptions } from './app.js';
export { startServer, isLoopback, type ServerOptions, type RunningServer } from './server.js';
export {
  hashApiKeys,
  parseApiKeys,
  type ApiKeyConfig,
  type HashedApiKey,
  type Scope,
} from './auth.js';
export { HTTP_STATUS, toHttpError } from './http-errors.js';
