/**
 * The seam through which tracing sees the HTTP service's requests (decision 0260): the service
 * asks the Leasehold for it on each request (`lh.instrumentation?.requests`) and knows nothing
 * of OpenTelemetry; `leasehold/opentelemetry` implements it.
 */

/** What a request is, as the tracing sees it when the request arrives. */
export interface TracedRequest {
  readonly method: string;
  /** The route's pattern (`/queues/:queue/jobs`); undefined when no route matched. */
  readonly route: string | undefined;
  /** The path and query as sent. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** One request's trace, from its arrival until its response is sent. */
export interface RequestTrace {
  /** Runs `fn` (the route's handler and what it starts) inside the request's trace context. */
  run<T>(fn: () => T): T;
  /** The request failed with `error` (its response tells the status). */
  error(error: unknown): void;
  /** The response was sent with `statusCode`. */
  end(statusCode: number): void;
}

export interface RequestTracing {
  start(request: TracedRequest): RequestTrace;
}
