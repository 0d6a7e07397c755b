/**
 * W3C Trace Context (`traceparent`, `tracestate`) in a job's headers or a request's, written and
 * read here rather than through the api's global propagator (decision 0260): a job's headers are
 * leasehold's own wire format, read by whatever process claims the job, so the format must not
 * depend on which propagator each process registered (none, by default: the api's is a no-op).
 */
import {
  ROOT_CONTEXT,
  createTraceState,
  isSpanContextValid,
  trace,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/** A header value longer than this is not stored by the queue (4 × the name limit). */
const HEADER_VALUE_MAX = 1024;

const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

const TRACEPARENT_FORMAT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** `00-<trace id>-<span id>-<flags>`. */
export function formatTraceparent(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The span context a `traceparent` names (remote), or undefined when it is not one. */
export function parseTraceparent(
  traceparent: string | undefined,
  tracestate?: string,
): SpanContext | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT_FORMAT.exec(traceparent.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  // Version ff is forbidden; version 00 has nothing after the flags.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const context: SpanContext = {
    traceId: traceId!,
    spanId: spanId!,
    traceFlags: parseInt(flags!, 16),
    isRemote: true,
  };
  // The format checked the hex; all zeros is the one invalid id left (isSpanContextValid would
  // run both regular expressions again, on the hot path of every handler run).
  if (traceId === INVALID_TRACE_ID || spanId === INVALID_SPAN_ID) return undefined;
  if (typeof tracestate === 'string' && tracestate.length > 0)
    context.traceState = createTraceState(tracestate);
  return context;
}

/**
 * Adds `span`'s context to `headers` unless they already carry a `traceparent` (the caller's own
 * wins), and only within the queue's limits: at most `maxEntries` headers in all, a `tracestate`
 * only if it fits in a header value. Answers the headers to store (the same object when unchanged).
 */
export function injectTraceContext(
  headers: Record<string, string> | undefined,
  span: SpanContext,
  maxEntries: number,
): Record<string, string> | undefined {
  if (!isSpanContextValid(span)) return headers;
  if (headers && TRACEPARENT in headers) return headers;
  const entries = headers ? Object.keys(headers).length : 0;
  if (entries >= maxEntries) return headers;
  const out: Record<string, string> = { ...headers, [TRACEPARENT]: formatTraceparent(span) };
  const state = span.traceState?.serialize();
  if (state && entries + 1 < maxEntries && !(TRACESTATE in out) && state.length <= HEADER_VALUE_MAX)
    out[TRACESTATE] = state;
  return out;
}

/** The context whose span is the one `headers` name, or the root context when they name none. */
export function extractTraceContext(
  headers: Readonly<Record<string, string | string[] | undefined>> | null | undefined,
): Context {
  if (!headers) return ROOT_CONTEXT;
  const parent = parseTraceparent(first(headers[TRACEPARENT]), first(headers[TRACESTATE]));
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/**
 * `extractTraceContext` remembering the last headers it read. The jobs of one `enqueueMany` carry
 * the same `traceparent`, and a claim hands a worker its jobs in a row, so most handler runs
 * read the headers the run before read: the parse and the context objects are done once per
 * run of equal headers instead of once per job (a context is immutable, so sharing it is safe).
 */
export class TraceContextReader {
  private traceparent: string | undefined;
  private tracestate: string | undefined;
  private context: Context = ROOT_CONTEXT;

  read(headers: Readonly<Record<string, string>>): Context {
    const traceparent = headers[TRACEPARENT];
    if (traceparent === undefined) return ROOT_CONTEXT;
    const tracestate = headers[TRACESTATE];
    if (traceparent !== this.traceparent || tracestate !== this.tracestate) {
      this.context = extractTraceContext(headers);
      this.traceparent = traceparent;
      this.tracestate = tracestate;
    }
    return this.context;
  }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
