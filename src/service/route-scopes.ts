/**
 * Authorization fails closed: every route states which scope it needs, and a route that states
 * none cannot be registered (issue 21, decision 0221). A route declares `config.scope`: `read`,
 * `write` or `admin`, or `public` for the few routes anyone may call. Routes that plugins register
 * (Swagger UI, the dashboard's static files) cannot be given a config, so such a plugin is
 * registered through `registerPublic`, which marks its whole context public: the list of public
 * routes is explicit in app.ts, and nothing becomes public by being forgotten.
 */
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyPluginCallback,
  FastifyPluginOptions,
} from 'fastify';
import { SCOPES, type Scope } from './auth.js';

/** What a route needs: a key of at least this scope, or nothing (`public`). */
export type RouteScope = Scope | 'public';
export const ROUTE_SCOPES: readonly RouteScope[] = ['public', ...SCOPES];

/** Thrown while the app is being built when a route declares no scope, or one that does not exist. */
export class UnscopedRouteError extends Error {
  constructor(method: string, url: string, declared: unknown) {
    super(
      declared === undefined
        ? `route ${method} ${url} declares no scope: give it config.scope ` +
            `(${ROUTE_SCOPES.join(', ')}); routes are not public by default`
        : `route ${method} ${url} declares the scope ${JSON.stringify(declared)}, ` +
            `which is not one of ${ROUTE_SCOPES.join(', ')}`,
    );
    this.name = 'UnscopedRouteError';
  }
}

// A decorator on a plugin's context: routes registered there (or in contexts it creates, which
// inherit it) are public. Never set on the root, so the default stays closed.
const PUBLIC_CONTEXT = Symbol('leasehold.publicRoutes');

/**
 * Refuses, at registration, every route without a valid scope. Call it on the root instance
 * before anything registers a route: child contexts inherit the hook.
 */
export function requireRouteScopes(app: FastifyInstance): void {
  const registered: ScopedRoute[] = [];
  registry.set(app, registered);
  app.addHook('onRoute', function (route) {
    const context = this as unknown as Record<symbol, unknown>;
    const declared: unknown =
      route.config?.scope ?? (context[PUBLIC_CONTEXT] === true ? 'public' : undefined);
    const methods = [route.method].flat();
    if (!ROUTE_SCOPES.includes(declared as RouteScope))
      throw new UnscopedRouteError(methods.join(','), route.url, declared);
    const scope = declared as RouteScope;
    route.config = { ...route.config, scope };
    for (const method of methods) registered.push({ method, url: route.url, scope });
  });
}

/** One method of one registered route, with the scope it needs. */
export interface ScopedRoute {
  readonly method: string;
  readonly url: string;
  readonly scope: RouteScope;
}

const registry = new WeakMap<FastifyInstance, readonly ScopedRoute[]>();

/** Every route registered so far on an app guarded by `requireRouteScopes`, in order. */
export function scopedRoutes(app: FastifyInstance): readonly ScopedRoute[] {
  const routes = registry.get(app);
  if (!routes) throw new Error('scopedRoutes: this app was not built with requireRouteScopes');
  return routes;
}

/** Registers a third-party plugin whose every route is public (documentation, static files). */
export async function registerPublic<Options extends FastifyPluginOptions>(
  app: FastifyInstance,
  plugin: FastifyPluginAsync<Options> | FastifyPluginCallback<Options>,
  options: Options,
): Promise<void> {
  await app.register(async (context) => {
    context.decorate(PUBLIC_CONTEXT, true);
    await context.register(plugin as FastifyPluginAsync<Options>, options);
  });
}
