/**
 * What every route module receives: the library facade (its managers, never the engine: routes
 * take the library's one way in, decision 0231), the event bus and the config.
 */
import type { LeaseholdFacade } from '../leasehold.js';
import type { TypedEvents } from '../runtime/events.js';
import type { Principal } from './auth.js';
import type { ServiceMetrics } from './metrics.js';
import type { RouteScope } from './route-scopes.js';
import type { LeaseJson, QueueSettingsJson } from './serialize.js';

/** Events the service publishes on its SSE stream (and counts in its metrics). */
export interface ServiceEventMap {
  'lease:acquired': LeaseJson;
  'lease:renewed': LeaseJson;
  'lease:released': LeaseJson;
  /** An acquire refused because another holder's lease is live. */
  'lease:refused': { resource: string; holder: string };
  /** A queue paused, resumed or reconfigured through the API: its settings now. */
  'queue:paused': QueueSettingsJson;
  'queue:resumed': QueueSettingsJson;
  'queue:configured': QueueSettingsJson;
  /** Jobs of a queue retried, cancelled or deleted by one operation over many jobs. */
  'queue:jobs-retried': { queue: string; changed: number };
  'queue:jobs-cancelled': { queue: string; changed: number };
  'queue:jobs-deleted': { queue: string; changed: number };
  [name: string]: unknown;
}

export interface ServiceContext {
  readonly lh: LeaseholdFacade;
  readonly events: TypedEvents<ServiceEventMap>;
  /** This instance's name, reported by /healthz and the generator status. */
  readonly instanceId: string;
  /** Set once the app has built its metrics registry. */
  metrics?: ServiceMetrics;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The scope a route needs, or `public`. Every route must declare it: the app refuses to build
     * with a route that does not (route-scopes.ts). Optional here only because Fastify's own
     * route shorthands take no required config.
     */
    scope?: RouteScope;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}
