/**
 * The service's Prometheus metrics, on a registry per app so several apps in one process (tests,
 * embedding) never clash. What the library does (claims, jobs, leases, elections, engine calls,
 * database gauges) comes from the library's own metrics (`lh.metrics({ registry })`,
 * src/metrics/, decision 0258), registered on the app's registry; only the HTTP metrics and the
 * process metrics are the service's own.
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LeaseholdFacade } from '../leasehold.js';
import type { LeaseholdMetrics } from '../metrics/leasehold-metrics.js';

export interface ServiceMetrics {
  readonly registry: Registry;
  /** The library's metrics, on this registry (the tasks route counts its outcomes there). */
  readonly library: LeaseholdMetrics;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  /** Stops observing the Leasehold (the app calls it when it closes). */
  detach(): void;
}

export function createMetrics(lh: LeaseholdFacade): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'leasehold_' });
  // prom-client names these three gauges `_total`, which Prometheus keeps for counters (promtool
  // refuses them); each is the sum over `type` of its gauge without the suffix, which stays.
  for (const name of ['active_handles', 'active_requests', 'active_resources'])
    registry.removeSingleMetric(`leasehold_nodejs_${name}_total`);
  const library = lh.metrics({ registry });
  return {
    registry,
    library,
    httpRequests: new Counter({
      name: 'leasehold_http_requests_total',
      help: 'HTTP requests by method, route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'leasehold_http_request_duration_seconds',
      help: 'HTTP request duration.',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    detach: () => library.close(),
  };
}
export function metricsRoutes(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route };
    metrics.httpRequests.inc({ ...labels, status: String(reply.statusCode) });
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getMetrics',
      tags: ['operations'],
      summary: 'Prometheus metrics.',
      produces: ['text/plain'],
    },
    handler: async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.header('content-type', metrics.registry.contentType).send(text);
    },
  });
}
