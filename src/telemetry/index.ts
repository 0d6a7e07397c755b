/**
 * `leasehold/opentelemetry`: OpenTelemetry tracing and metrics for a Leasehold (decision 0260).
 * Importing this entry loads `@opentelemetry/api` (an optional peer dependency); the main entry
 * never does. See docs/observability.md, "OpenTelemetry".
 */
export {
  instrument,
  INSTRUMENTATION_SCOPE,
  type InstrumentOptions,
  type LeaseholdTelemetry,
} from './instrument.js';
export {
  extractTraceContext,
  formatTraceparent,
  injectTraceContext,
  parseTraceparent,
  TRACEPARENT,
  TRACESTATE,
} from './trace-context.js';
