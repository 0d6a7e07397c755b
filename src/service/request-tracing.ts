/**
 * Hands each request to the tracing installed on the Leasehold (decision 0260), if any: read at
 * every request, so `instrument(lh)` after the app was built still applies. The route's handler
 * runs inside the request's trace context from `preHandler` on: by then the body is parsed, and
 * what the handler starts (an enqueue, a lease call) joins the request's trace. Callback hooks,
 * not async ones: an async hook costs a promise and a microtask turn per request (see app.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LeaseholdFacade } from '../leasehold.js';
import type { RequestTrace } from '../runtime/request-tracing.js';

export function traceRequests(app: FastifyInstance, lh: LeaseholdFacade): void {
  const traces = new WeakMap<FastifyRequest, RequestTrace>();
  app.addHook('onRequest', (request, _reply, done) => {
    const tracing = lh.instrumentation?.requests;
    if (tracing)
      traces.set(
        request,
        tracing.start({
          method: request.method,
          route: request.is404 ? undefined : request.routeOptions.url,
          url: request.url,
          headers: request.headers,
        }),
      );
    done();
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const trace = traces.get(request);
    if (trace) trace.run(done);
    else done();
  });
  app.addHook('onError', (request, _reply, error, done) => {
    traces.get(request)?.error(error);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const trace = traces.get(request);
    if (trace) {
      traces.delete(request);
      trace.end(reply.statusCode);
    }
    done();
  });
}
