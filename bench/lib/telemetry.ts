/**
 * OpenTelemetry as a user would switch it on, for the burn-down's cost ratio (decision 0260):
 * the AsyncLocalStorage context manager, the SDK's tracer provider with sampling on (the
 * default sampler, parent-based always-on) and a batch processor whose exporter drops what it
 * is given, and a meter provider with a reader. Every span and metric is made and recorded as in
 * production; only the network export is left out (no collector on the bench machine).
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Leasehold } from '../../src/leasehold.js';
import { instrument } from '../../src/telemetry/index.js';

const droppingExporter: SpanExporter = {
  export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
  shutdown: () => Promise.resolve(),
};

/** What to switch on (all of it by default); parts alone are for bench/telemetry-ab.ts. */
export interface TelemetrySetup {
  /** The AsyncLocalStorage context manager (what any OTel user in Node registers). */
  contextManager: boolean;
  /** leasehold's spans through the SDK tracer provider. */
  tracing: boolean;
  /** leasehold's metrics through the SDK meter provider. */
  metrics: boolean;
  /**
   * The share of new traces sampled (a `ParentBasedSampler` over a `TraceIdRatioBasedSampler`,
   * the usual production setting); absent: every trace (the SDK's default, parent-based
   * always-on).
   */
  sampleRatio?: number;
  /**
   * Enter the context manager once before the drain, as any instrumented HTTP server or
   * framework does with its first request: on Node 20 that switches AsyncLocalStorage's promise
   * hooks on for the rest of the process, whatever leasehold does.
   */
  activated?: boolean;
}

export const FULL_TELEMETRY: TelemetrySetup = {
  contextManager: true,
  tracing: true,
  metrics: true,
};

/** Instruments `lh` for the life of `fn`, then takes it all down (the next run is plain again). */
export async function withTelemetry<T>(
  lh: Leasehold,
  fn: () => Promise<T>,
  setup: TelemetrySetup = FULL_TELEMETRY,
): Promise<T> {
  if (setup.contextManager)
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (setup.contextManager && setup.activated) context.with(context.active(), () => undefined);
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(droppingExporter)],
    ...(setup.sampleRatio === undefined
      ? {}
      : {
          sampler: new ParentBasedSampler({
            root: new TraceIdRatioBasedSampler(setup.sampleRatio),
          }),
        }),
  });
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 10_000,
      }),
    ],
  });
  const telemetry =
    setup.tracing || setup.metrics
      ? instrument(lh, {
          tracerProvider,
          meterProvider,
          tracing: setup.tracing,
          metrics: setup.metrics,
        })
      : undefined;
  try {
    return await fn();
  } finally {
    telemetry?.close();
    await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    if (setup.contextManager) context.disable();
  }
}
