/**
 * The observability configurations the cost measurements compare (decisions 0258 and 0260):
 * plain, the library's Prometheus metrics, and OpenTelemetry in parts and whole. Each is run in a
 * process of its own (isolated-drain.ts): run together in one process they measured each other.
 */
import type { TelemetrySetup } from './telemetry.js';

export interface ObservabilityMode {
  /** `lh.metrics()` observing (Prometheus, decision 0258). */
  metrics?: boolean;
  /** OpenTelemetry, as bench/lib/telemetry.ts switches it on (decision 0260). */
  telemetry?: TelemetrySetup;
}

const otel = (telemetry: TelemetrySetup): ObservabilityMode => ({ telemetry });

export const OBSERVABILITY_MODES = {
  plain: {},
  prometheus: { metrics: true },
  context: otel({ contextManager: true, tracing: false, metrics: false }),
  activated: otel({ contextManager: true, activated: true, tracing: false, metrics: false }),
  tracing: otel({ contextManager: true, tracing: true, metrics: false }),
  unsampled: otel({ contextManager: true, tracing: true, metrics: false, sampleRatio: 0 }),
  metrics: otel({ contextManager: false, tracing: false, metrics: true }),
  full: otel({ contextManager: true, tracing: true, metrics: true }),
} satisfies Record<string, ObservabilityMode>;

export type ObservabilityModeName = keyof typeof OBSERVABILITY_MODES;

export function isObservabilityMode(name: string): name is ObservabilityModeName {
  return Object.hasOwn(OBSERVABILITY_MODES, name);
}
