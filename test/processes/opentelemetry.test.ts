// The cross-process trace of issue 29 (decision 0260): a span started around `enqueue` in this
// process is the parent of the handler's span in another process, which runs an instrumented
// worker with the OpenTelemetry SDK and prints its finished spans as JSON lines. The trace
// context crosses in the job's `traceparent` header, through PostgreSQL only.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Leasehold } from '../../src/leasehold.js';
import { instrument } from '../../src/telemetry/index.js';
import { startScript } from '../support/cli-process.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { EVENT_TIMEOUT_MS } from '../support/timing.js';

after(closeTestDatabase);

const FIXTURE = new URL('./fixtures/otel-worker.ts', import.meta.url).pathname;

interface SpanLine {
  event: 'span';
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
}

describe('OpenTelemetry across processes', () => {
  it('a span around enqueue here is the parent of the handler span in another process', () =>
    withSchema('otel cross process', async (ctx) => {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      const exporter = new InMemorySpanExporter();
      const tracerProvider = new BasicTracerProvider({
        spanProcessors: [new SimpleSpanProcessor(exporter)],
      });
      const lh = Leasehold.fromEngine(await ctx.engine());
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      const worker = startScript(FIXTURE, [], {
        DATABASE_URL: ctx.url,
        SCHEMA: ctx.schema,
        QUEUE: 'remote',
      });
      try {
        await worker.waitForLine(/"event":"ready"/, EVENT_TIMEOUT_MS);
        const tracer = tracerProvider.getTracer('test');
        const { job, enqueueSpan } = await tracer.startActiveSpan('place order', async (span) => {
          try {
            const enqueued = await lh.queue('remote').enqueue({ order: 7 }, { type: 'ship' });
            return { job: enqueued, enqueueSpan: span.spanContext() };
          } finally {
            span.end();
          }
        });
        await worker.waitForLine(
          new RegExp(`"event":"completed","id":${job.id}\\b`),
          EVENT_TIMEOUT_MS,
        );
        // The handler's own span ends inside the process span, which ends after it: wait for both.
        await worker.waitForLine(/"name":"process remote"/, EVENT_TIMEOUT_MS);
        const remote = worker.lines
          .filter((line) => line.startsWith('{"event":"span"'))
          .map((line) => JSON.parse(line) as SpanLine);
        const process = remote.find((s) => s.name === 'process remote');
        assert.ok(process, 'the worker process made a process span');
        assert.equal(process.traceId, enqueueSpan.traceId, 'one trace across both processes');
        assert.equal(process.parentSpanId, enqueueSpan.spanId, 'the enqueue span is the parent');
        assert.equal(process.attributes['messaging.message.id'], String(job.id));
        assert.equal(process.attributes['leasehold.job.type'], 'ship');
        assert.equal(process.attributes['leasehold.token'], 1);
        const work = remote.find((s) => s.name === 'handler work');
        assert.equal(work?.parentSpanId, process.spanId, "the handler's own span nests under it");
        // This process never ran the job: its spans are the caller's and the send span only.
        const local = exporter.getFinishedSpans().map((s) => s.name);
        assert.deepEqual(local.sort(), ['place order', 'send remote']);
      } finally {
        worker.kill('SIGTERM');
        await worker.exited();
        telemetry.close();
        await lh.close();
        await tracerProvider.shutdown();
        context.disable();
      }
    }));
});
