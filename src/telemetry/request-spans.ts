/**
 * One SERVER span per request to the HTTP service (decision 0260), through the service's tracing
 * seam (src/runtime/request-tracing.ts): `<METHOD> <route>`, a child of the caller's trace when
 * the request carries a `traceparent`. The route's handler runs inside it, so a job enqueued by
 * a request carries the request's trace. Status ERROR for a 5xx answer (a 4xx is the caller's
 * error, per the HTTP semantic conventions); an error the service caught is recorded either way.
 * The query string is left out (`url.path` only): it may carry what a trace store should not keep.
 */
import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Attributes,
  type Tracer,
} from '@opentelemetry/api';
import type { RequestTrace, RequestTracing, TracedRequest } from '../runtime/request-tracing.js';
import { HTTP_METHOD, HTTP_ROUTE, HTTP_STATUS, URL_PATH } from './attributes.js';
import { extractTraceContext } from './trace-context.js';

export class RequestSpans implements RequestTracing {
  constructor(private readonly tracer: Tracer) {}

  start(request: TracedRequest): RequestTrace {
    const queryAt = request.url.indexOf('?');
    const attributes: Attributes = {
      [HTTP_METHOD]: request.method,
      [URL_PATH]: queryAt < 0 ? request.url : request.url.slice(0, queryAt),
    };
    if (request.route !== undefined) attributes[HTTP_ROUTE] = request.route;
    const parent = extractTraceContext(request.headers);
    const name =
      request.route === undefined ? request.method : `${request.method} ${request.route}`;
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    const active = trace.setSpan(parent, span);
    let ended = false;
    let failure: string | undefined;
    return {
      run: (fn) => context.with(active, fn),
      error: (error) => {
        if (ended) return;
        const exception = error instanceof Error ? error : new Error(String(error));
        span.recordException(exception);
        failure = exception.message;
      },
      end: (statusCode) => {
        if (ended) return;
        ended = true;
        span.setAttribute(HTTP_STATUS, statusCode);
        if (statusCode >= 500)
          span.setStatus({ code: SpanStatusCode.ERROR, message: failure ?? `HTTP ${statusCode}` });
        span.end();
      },
    };
  }
}
