/**
 * `instrument(lh)`: OpenTelemetry traces and metrics for one Leasehold (decision 0260). Nothing
 * of this is loaded unless imported (`leasehold/opentelemetry`), so a program without
 * `@opentelemetry/api` pays nothing; once called, it listens to the engine's call events and
 * installs the job, request and service hooks of `lh.instrument()`.
 */
import { metrics, trace, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { InvalidArgumentError } from '../core/errors.js';
import { optionalBoolean } from '../core/validate.js';
import type { Leasehold } from '../leasehold.js';
import type { LeaseholdInstrumentation } from '../leasehold-options.js';
import type { Election } from '../locks/election.js';
import type { Worker } from '../queue/worker.js';
import { ElectionSpans } from './election-spans.js';
import { EngineSpans } from './engine-spans.js';
import { JobSpans } from './job-spans.js';
import { OtelMetrics } from './otel-metrics.js';
import { RequestSpans } from './request-spans.js';

/** The name of leasehold's tracer and meter (the instrumentation scope). */
export const INSTRUMENTATION_SCOPE = 'leasehold';

export interface InstrumentOptions {
  /** Where spans go (default: the global one, `trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Where metrics go (default: the global one, `metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
  /** Make spans (default true). */
  tracing?: boolean;
  /** Record metrics (default true). */
  metrics?: boolean;
}

/** What `instrument` answers: `close()` stops tracing and metrics (spans open then end). */
export interface LeaseholdTelemetry {
  close(): void;
}

/**
 * Traces and measures `lh` through OpenTelemetry: spans for enqueues, claims, handler runs
 * (children of the enqueue's trace, across processes, through the job's `traceparent` header),
 * lease calls, election terms and the HTTP service's requests; metrics mirroring `lh.metrics()`.
 * One instrumentation per Leasehold at a time (`conflict` otherwise).
 *
 * ```ts
 * import { instrument } from 'leasehold/opentelemetry';
 * const telemetry = instrument(lh); // the global tracer and meter providers
 * ```
 */
export function instrument(
  lh: Pick<Leasehold, 'on' | 'instrument'>,
  options: InstrumentOptions = {},
): LeaseholdTelemetry {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError(
      'options',
      'must be an object { tracerProvider?, meterProvider?, tracing?, metrics? }',
    );
  const tracing = optionalBoolean('tracing', options.tracing, true);
  const measuring = optionalBoolean('metrics', options.metrics, true);
  const tracerProvider = requireProvider('tracerProvider', options.tracerProvider, 'getTracer');
  const meterProvider = requireProvider('meterProvider', options.meterProvider, 'getMeter');

  const stops: (() => void)[] = [];
  const watchers: ((service: Worker | Election) => void)[] = [];
  let jobs: JobSpans | undefined;
  let requests: RequestSpans | undefined;
  if (tracing) {
    const tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE);
    const engineSpans = new EngineSpans(tracer);
    const elections = new ElectionSpans(tracer);
    jobs = new JobSpans(tracer);
    requests = new RequestSpans(tracer);
    watchers.push((service) => {
      if ('instanceId' in service) elections.watch(service);
    });
    stops.push(lh.on('engine', engineSpans.observe), () => elections.close());
  }
  if (measuring) {
    const meter = (meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE);
    const otelMetrics = new OtelMetrics(meter);
    watchers.push((service) => otelMetrics.watch(service));
    stops.push(lh.on('engine', otelMetrics.observe), () => otelMetrics.close());
  }
  const instrumentation: LeaseholdInstrumentation = {
    ...(jobs ? { jobs } : {}),
    ...(requests ? { requests } : {}),
    service: (service) => {
      for (const watch of watchers) watch(service);
    },
  };
  let uninstall: () => void;
  try {
    uninstall = lh.instrument(instrumentation);
  } catch (error) {
    for (const stop of stops) stop();
    throw error;
  }
  let closed = false;
  return {
    close() {
      if (closed) return;
      closed = true;
      uninstall();
      for (const stop of stops.splice(0)) stop();
    },
  };
}

function requireProvider<T>(field: string, value: T | undefined, method: string): T | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as Record<string, unknown>)[method] !== 'function'
  )
    throw new InvalidArgumentError(field, `must be an OpenTelemetry provider with ${method}()`);
  return value;
}
