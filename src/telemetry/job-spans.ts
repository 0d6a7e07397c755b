/**
 * Spans of enqueues and handler runs (decision 0260), through the queue's and the worker's
 * tracing seam (src/queue/job-tracing.ts).
 *
 * - `send <queue>` (PRODUCER) around each `enqueue`/`enqueueMany` call. Each job's headers get
 *   the trace context the job was enqueued in: the span active at the call when there is one
 *   (so the caller's span is the handler's parent, as issue 29 asks), else the send span itself.
 * - `process <queue>` (CONSUMER) around each handler run, a child of the context in the job's
 *   headers (a root span without one: never of whatever happened to be active in the worker),
 *   and the handler runs inside it, so the user's own spans nest under it.
 */
import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Job } from '../core/types.js';
import type { JobSpec } from '../engine/jobs.js';
import { QUEUE_LIMITS } from '../queue/enqueue-options.js';
import type { JobContext } from '../queue/job-handler.js';
import type { JobTracing } from '../queue/job-tracing.js';
import { JobSleepSignal } from '../queue/job-steps.js';
import {
  JOB_ATTEMPT,
  JOB_CREATED,
  JOB_SLEPT,
  JOB_TYPE,
  MESSAGING_BATCH_COUNT,
  MESSAGING_DESTINATION,
  MESSAGING_MESSAGE_ID,
  MESSAGING_OPERATION_NAME,
  MESSAGING_OPERATION_TYPE,
  MESSAGING_SYSTEM,
  SYSTEM,
  TOKEN,
} from './attributes.js';
import { TraceContextReader, injectTraceContext } from './trace-context.js';

export class JobSpans implements JobTracing {
  private readonly parents = new TraceContextReader();

  constructor(private readonly tracer: Tracer) {}

  async enqueue(
    queue: string,
    specs: readonly JobSpec[],
    send: () => Promise<readonly Job[]>,
  ): Promise<readonly Job[]> {
    const attributes: Attributes = {
      [MESSAGING_SYSTEM]: SYSTEM,
      [MESSAGING_DESTINATION]: queue,
      [MESSAGING_OPERATION_TYPE]: 'send',
      [MESSAGING_OPERATION_NAME]: 'send',
    };
    if (specs.length !== 1) attributes[MESSAGING_BATCH_COUNT] = specs.length;
    else if (specs[0]!.type) attributes[JOB_TYPE] = specs[0]!.type;
    const span = this.tracer.startSpan(`send ${queue}`, { kind: SpanKind.PRODUCER, attributes });
    const caller = trace.getSpanContext(context.active());
    const carried = caller ?? span.spanContext();
    for (const spec of specs)
      spec.headers = injectTraceContext(spec.headers, carried, QUEUE_LIMITS.headerCountMax);
    try {
      const jobs = await context.with(trace.setSpan(context.active(), span), send);
      if (jobs.length === 1) {
        const job = jobs[0]! as Job & { created?: boolean };
        span.setAttribute(MESSAGING_MESSAGE_ID, String(job.id));
        if (typeof job.created === 'boolean') span.setAttribute(JOB_CREATED, job.created);
      }
      return jobs;
    } catch (error) {
      fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  handle(job: Job, ctx: JobContext, run: () => Promise<unknown>): Promise<unknown> {
    const attributes: Attributes = {
      [MESSAGING_SYSTEM]: SYSTEM,
      [MESSAGING_DESTINATION]: job.queue,
      [MESSAGING_OPERATION_TYPE]: 'process',
      [MESSAGING_OPERATION_NAME]: 'process',
      [MESSAGING_MESSAGE_ID]: String(job.id),
      [JOB_ATTEMPT]: ctx.attempt,
      [TOKEN]: ctx.token,
    };
    if (job.type !== null) attributes[JOB_TYPE] = job.type;
    const parent = this.parents.read(job.headers);
    const span = this.tracer.startSpan(
      `process ${job.queue}`,
      { kind: SpanKind.CONSUMER, attributes },
      parent,
    );
    // Plain promise callbacks rather than an async wrapper: a span per job is the hot path.
    let running: Promise<unknown>;
    try {
      running = context.with(trace.setSpan(parent, span), run);
    } catch (error) {
      return Promise.reject(ended(span, error));
    }
    return running.then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => Promise.reject(ended(span, error)),
    );
  }
}

/** Ends `span` after its handler threw `error`, and answers the error, to be thrown on. */
function ended(span: Span, error: unknown): unknown {
  // `ctx.sleep` ends the attempt by throwing: a pause, not a failure.
  if (error instanceof JobSleepSignal) span.setAttribute(JOB_SLEPT, error.step);
  else fail(span, error);
  span.end();
  return error;
}

/** Ends nothing: marks `span` failed with `error` (status ERROR, the exception recorded). */
export function fail(span: Span, error: unknown): void {
  const exception = error instanceof Error ? error : new Error(String(error));
  span.recordException(exception);
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
}
