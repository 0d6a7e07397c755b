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
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Leasehold } from '../../src/leasehold.js';
import { instrument } from '../../src/telemetry/index.js';

const droppingExporter: SpanExporter = {
  export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }),
  shutdown: () => Promise.resolve(),
};

/** Instruments `lh` for the life of `fn`, then takes it all down (the next run is plain again). */
export async function withTelemetry<T>(lh: Leasehold, fn: () => Promise<T>): Promise<T> {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(droppingExporter)],
  });
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 10_000,
      }),
    ],
  });
  const telemetry = instrument(lh, { tracerProvider, meterProvider });
  try {
    return await fn();
  } finally {
    telemetry.close();
    await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    context.disable();
  }
}
