/**
 * Prometheus metrics (prom-client), on a registry per app so several apps in one process (tests,
 * embedding) never clash. Counters and histograms follow what this instance does; the gauges
 * of database state (active leases, jobs by status) are read from the database at scrape time,
 * so every instance reports the same fleet-wide numbers.
 *
 * Engine call durations (and the claim latency, which is one of them) come from the instrumented
 * engine's events (`lh.on('engine')`, decision 0234), not from timing in the routes: every engine
 * call this instance makes is observed once, whoever made it.
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DEFAULT_DURATION_BUCKETS_MS } from '../engine/engine-metrics.js';
import type { EngineCallEvent } from '../engine/instrumented-engine.js';
import type { LeaseholdFacade } from '../leasehold.js';

export interface ServiceMetrics {
  readonly registry: Registry;
  readonly leaseAcquisitions: Counter<'result'>;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  readonly jobDuration: Histogram<'queue' | 'outcome'>;
  readonly claimLatency: Histogram<'queue'>;
  readonly engineCalls: Histogram<'operation' | 'outcome'>;
  /** Stops observing the Leasehold's engine calls (the app calls it when it closes). */
  detach(): void;
}

export function createMetrics(lh: LeaseholdFacade): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'leasehold_' });
  const metrics: ServiceMetrics = {
    registry,
    leaseAcquisitions: new Counter({
      name: 'leasehold_lease_acquisitions_total',
      help:
        'Lease acquire requests answered by this instance, by result: acquired (a new term, 201), ' +
        "extended (the caller's own live term, 200), held (another holder's, 409).",
      labelNames: ['result'],
      registers: [registry],
    }),
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
    jobDuration: new Histogram({
      name: 'leasehold_job_duration_seconds',
      help: 'Time from claim to completion or failure, for tasks handled through this instance.',
      labelNames: ['queue', 'outcome'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    claimLatency: new Histogram({
      name: 'leasehold_claim_latency_seconds',
      help:
        'Time a claim spends in the engine, by queue: every successful claim this instance makes ' +
        '(POST /api/tasks/next, and any worker of this process), from the instrumented engine.',
      labelNames: ['queue'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers: [registry],
    }),
    engineCalls: new Histogram({
      name: 'leasehold_engine_call_duration_seconds',
      help: 'Engine calls made by this instance, by operation and outcome (the instrumented engine).',
      labelNames: ['operation', 'outcome'],
      buckets: DEFAULT_DURATION_BUCKETS_MS.map((ms) => ms / 1000),
      registers: [registry],
    }),
    detach: () => stopObserving(),
  };
  const observeCall = (call: EngineCallEvent): void => {
    const seconds = call.durationMs / 1000;
    metrics.engineCalls.observe({ operation: call.operation, outcome: call.outcome }, seconds);
    if (call.operation === 'jobClaimBatch' && call.outcome === 'ok')
      for (const queue of call.params.queues) metrics.claimLatency.observe({ queue }, seconds);
  };
  const stopObserving = lh.on('engine', observeCall);
  new Gauge({
    name: 'leasehold_leases_active',
    help: 'Leases held right now (fleet-wide, read from the database at scrape time).',
    registers: [registry],
    async collect() {
      // Counted in the database: a listing would stop at its page size.
      this.set(await lh.leases.countActive());
    },
  });
  new Gauge({
    name: 'leasehold_jobs',
    help: 'Jobs by queue and status (fleet-wide, read from the database at scrape time).',
    labelNames: ['queue', 'status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await lh.jobs.counts().catch(() => []))
        this.set({ queue: row.queue, status: row.status }, row.count);
    },
  });
  return metrics;
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
