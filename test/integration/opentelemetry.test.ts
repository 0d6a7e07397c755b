/**
 * OpenTelemetry tracing and metrics (`leasehold/opentelemetry`, decision 0260) with the real SDK
 * (BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter, the AsyncLocalStorage context
 * manager; MeterProvider with an in-memory metric exporter) on PostgreSQL. The cross-process
 * case is test/processes/opentelemetry.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SpanKind, SpanStatusCode, context, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { ConflictError, InvalidArgumentError } from '../../src/core/errors.js';
import { Leasehold } from '../../src/leasehold.js';
import type { JobHandler } from '../../src/queue/job-handler.js';
import { buildApp } from '../../src/service/app.js';
import { instrument } from '../../src/telemetry/index.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { LIVENESS_MS, waitFor } from '../support/wait.js';

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
const tracer = tracerProvider.getTracer('test');
const contextManager = new AsyncLocalStorageContextManager();

before(() => {
  context.setGlobalContextManager(contextManager.enable());
});
after(async () => {
  context.disable();
  await tracerProvider.shutdown();
  await closeTestDatabase();
});

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

function spans(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === name);
}

function only(name: string): ReadableSpan {
  const found = spans(name);
  assert.equal(found.length, 1, `one span "${name}", got ${found.length}`);
  return found[0]!;
}

/** Runs `fn` inside a span of the test's own, ended when `fn` settles. */
function inSpan<T>(name: string, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await fn(span);
    } finally {
      span.end();
    }
  });
}

describe('OpenTelemetry', () => {
  it('carries the enqueue span into the handler span: same trace, that span its parent, messaging attributes; user spans nest in the handler span', () =>
    withSchema('otel handler child', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        const worker = lh.worker({
          queues: 'mail',
          pollInterval: 50,
          handler: async () => {
            // The user's own span, inside the handler: a child of the process span.
            tracer.startSpan('render').end();
            return 'sent';
          },
        });
        const completed = worker.events.once('job:completed', { timeoutMs: LIVENESS_MS });
        await worker.start();
        const { job, producer } = await inSpan('checkout', async (span) => ({
          job: await lh.queue('mail').enqueue({ to: 'a' }, { type: 'welcome' }),
          producer: span.spanContext(),
        }));
        await completed;
        await worker.stop();

        const parent = TRACEPARENT.exec(job.headers.traceparent ?? '');
        assert.ok(parent, `traceparent written: ${JSON.stringify(job.headers)}`);
        assert.equal(parent[1], producer.traceId);
        assert.equal(parent[2], producer.spanId, 'the caller span is the one carried');

        await waitFor('the process span', () => spans('process mail').length === 1);
        const process = only('process mail');
        assert.equal(process.kind, SpanKind.CONSUMER);
        assert.equal(process.spanContext().traceId, producer.traceId);
        assert.equal(process.parentSpanContext?.spanId, producer.spanId);
        assert.deepEqual(
          {
            system: process.attributes['messaging.system'],
            queue: process.attributes['messaging.destination.name'],
            operation: process.attributes['messaging.operation.type'],
            id: process.attributes['messaging.message.id'],
            type: process.attributes['leasehold.job.type'],
            attempt: process.attributes['leasehold.job.attempt'],
            token: process.attributes['leasehold.token'],
          },
          {
            system: 'leasehold',
            queue: 'mail',
            operation: 'process',
            id: String(job.id),
            type: 'welcome',
            attempt: 1,
            token: 1,
          },
        );
        assert.equal(process.status.code, SpanStatusCode.UNSET);

        const render = only('render');
        assert.equal(render.parentSpanContext?.spanId, process.spanContext().spanId);

        const send = only('send mail');
        assert.equal(send.kind, SpanKind.PRODUCER);
        assert.equal(send.parentSpanContext?.spanId, producer.spanId);
        assert.equal(send.attributes['messaging.message.id'], String(job.id));
        assert.equal(send.attributes['messaging.operation.type'], 'send');
        assert.equal(send.attributes['leasehold.job.created'], true);

        const receive = only('receive mail');
        assert.equal(receive.kind, SpanKind.CONSUMER);
        assert.equal(receive.attributes['messaging.batch.message_count'], 1);
        assert.equal(receive.parentSpanContext, undefined, 'a claim span is a root');
      } finally {
        telemetry.close();
        await lh.close();
      }
    }));

  it('ends a failing handler span with status ERROR and the exception recorded', () =>
    withSchema('otel handler failure', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        const worker = lh.worker({
          queues: 'bad',
          pollInterval: 50,
          handler: async () => {
            throw new Error('smtp refused');
          },
        });
        const failed = worker.events.once('job:failed', { timeoutMs: LIVENESS_MS });
        await worker.start();
        await lh.queue('bad').enqueue(null, { maxAttempts: 1 });
        assert.equal((await failed).outcome, 'dead');
        await worker.stop();
        const process = only('process bad');
        assert.equal(process.status.code, SpanStatusCode.ERROR);
        assert.equal(process.status.message, 'smtp refused');
        const exception = process.events.find((e) => e.name === 'exception');
        assert.equal(exception?.attributes?.['exception.message'], 'smtp refused');
        // Enqueued outside any span: the job carries the send span, the handler's parent.
        const send = only('send bad');
        assert.equal(send.parentSpanContext, undefined);
        assert.equal(process.parentSpanContext?.spanId, send.spanContext().spanId);
      } finally {
        telemetry.close();
        await lh.close();
      }
    }));

  it('adds no header without instrumentation, nor after close(), and never overwrites a traceparent the caller set', () =>
    withSchema('otel no headers', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      try {
        const queue = lh.queue('plain');
        const before = await inSpan('outer', () => queue.enqueue(1, { headers: { tenant: 't' } }));
        assert.deepEqual(before.headers, { tenant: 't' });
        const many = await inSpan('outer', () => queue.enqueueMany([{ payload: 2 }]));
        assert.deepEqual(many[0]!.headers, {});

        const telemetry = instrument(lh, { tracerProvider, metrics: false });
        const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
        const kept = await inSpan('outer', () =>
          queue.enqueue(3, { headers: { traceparent: own } }),
        );
        assert.deepEqual(kept.headers, { traceparent: own });
        const traced = await inSpan('outer', () =>
          queue.enqueueMany([{ payload: 4 }, { payload: 5 }]),
        );
        for (const job of traced) assert.match(job.headers.traceparent ?? '', TRACEPARENT);
        assert.deepEqual(
          spans('send plain').map((span) => span.attributes['messaging.batch.message_count']),
          [undefined, 2],
        );
        telemetry.close();

        const after = await inSpan('outer', () => queue.enqueue(6));
        assert.deepEqual(after.headers, {});
        assert.equal(spans('send plain').length, 2, 'no span after close');
      } finally {
        await lh.close();
      }
    }));

  it('gives each handler span the parent its own job carries when jobs of several traces, and of none, run in a row', () =>
    withSchema('otel parents in a row', async (schema) => {
      exporter.reset();
      const plain = Leasehold.fromEngine(await schema.engine());
      const lh = Leasehold.fromEngine(await schema.engine());
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        // The worker reads a parent once per run of equal headers (TraceContextReader): jobs
        // alternating between two traces, and one with no traceparent, must not share one.
        const queue = lh.queue('rows');
        const a = await inSpan('a', async (span) => {
          await queue.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 } }]);
          return span.spanContext().spanId;
        });
        const b = await inSpan('b', async (span) => {
          await queue.enqueue({ n: 3 });
          return span.spanContext().spanId;
        });
        await plain.queue('rows').enqueue({ n: 4 });
        await inSpan('a again', async () => {
          await queue.enqueue(
            { n: 5 },
            { headers: { traceparent: `00-${'1'.repeat(32)}-${a}-01` } },
          );
        });
        const order: number[] = [];
        const worker = lh.worker({
          queues: 'rows',
          concurrency: 1,
          pollInterval: 50,
          handler: async (job) => {
            order.push((job.payload as { n: number }).n);
            tracer.startSpan(`user ${(job.payload as { n: number }).n}`).end();
          },
        });
        await worker.start();
        await waitFor('five handler spans', () => spans('process rows').length === 5);
        await worker.stop();
        assert.deepEqual(order, [1, 2, 3, 4, 5]);
        const parentOf = (n: number): string | undefined => {
          const user = only(`user ${n}`);
          const process = spans('process rows').find(
            (s) => s.spanContext().spanId === user.parentSpanContext?.spanId,
          );
          assert.ok(process, `job ${n}'s own span is inside its process span`);
          return process.parentSpanContext?.spanId;
        };
        assert.deepEqual(
          [1, 2, 3, 4, 5].map(parentOf),
          [a, a, b, undefined, a],
          'jobs 1 and 2 under a, 3 under b, 4 a root, 5 under the traceparent it was given',
        );
        assert.equal(
          only('user 5').spanContext().traceId,
          '1'.repeat(32),
          'job 5 in the trace its own traceparent names, not the one of job 1 and 2',
        );
      } finally {
        telemetry.close();
        await lh.close();
        await plain.close();
      }
    }));

  it('completes a job whose JavaScript handler answers a plain value, as an untraced worker does', () =>
    withSchema('otel plain handler', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        // Not what the types allow, but what a JavaScript user writes; without tracing the
        // worker awaits the value, so tracing must not turn it into a failure.
        const handler = ((job: { payload: unknown }) => ({
          echo: job.payload,
        })) as unknown as JobHandler;
        const worker = lh.worker({ queues: 'sync', pollInterval: 50, handler });
        const completed = worker.events.once('job:completed', { timeoutMs: LIVENESS_MS });
        await worker.start();
        const job = await lh.queue('sync').enqueue({ n: 1 });
        await completed;
        await worker.stop();
        assert.equal((await lh.jobs.get(job.id))?.status, 'completed');
        assert.equal(only('process sync').status.code, SpanStatusCode.UNSET);
      } finally {
        telemetry.close();
        await lh.close();
      }
    }));

  it('traces a flow as one enqueue: every job of the tree carries the caller span, one send span counts them', () =>
    withSchema('otel flow', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        let caller = '';
        const flow = await inSpan('checkout', (span) => {
          caller = span.spanContext().spanId;
          return lh.queue('invoices').enqueueFlow({
            payload: { order: 1 },
            children: [
              { queue: 'pdf', payload: { page: 1 } },
              { queue: 'pdf', payload: { page: 2 }, children: [{ queue: 'fonts', payload: {} }] },
            ],
          });
        });
        const ids = [
          flow.job.id,
          ...flow.children.flatMap((c) => [c.job.id, ...c.children.map((g) => g.job.id)]),
        ];
        assert.equal(ids.length, 4);
        for (const id of ids) {
          const job = (await lh.jobs.get(id))!;
          const [, , parent] = TRACEPARENT.exec(job.headers.traceparent ?? '') ?? [];
          assert.equal(parent, caller, `job ${id} carries the caller span`);
        }
        assert.equal(only('send invoices').attributes['messaging.batch.message_count'], 4);
      } finally {
        telemetry.close();
        await lh.close();
      }
    }));

  it('makes lease acquire, renew and release spans with resource, holder, token and result, children of the caller span', () =>
    withSchema('otel leases', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        const caller = await inSpan('nightly', async (span) => {
          const lease = await lh.leases.acquire('report', { holder: 'a', ttl: '30s' });
          assert.ok(lease);
          assert.equal(await lh.leases.acquire('report', { holder: 'b', ttl: '30s' }), null);
          assert.ok(await lh.leases.renew(lease, { ttl: '30s' }));
          assert.ok(await lh.leases.release(lease));
          return { span: span.spanContext(), token: lease.token };
        });
        const acquires = spans('lease acquire');
        assert.deepEqual(
          acquires.map((s) => [
            s.attributes['leasehold.lease.holder'],
            s.attributes['leasehold.lease.result'],
          ]),
          [
            ['a', 'acquired'],
            ['b', 'held'],
          ],
        );
        const renew = only('lease renew');
        const release = only('lease release');
        for (const span of [...acquires, renew, release]) {
          assert.equal(span.attributes['leasehold.lease.resource'], 'report');
          assert.equal(span.parentSpanContext?.spanId, caller.span.spanId);
        }
        assert.equal(acquires[0]!.attributes['leasehold.token'], caller.token);
        assert.equal(renew.attributes['leasehold.lease.result'], 'renewed');
        assert.equal(renew.attributes['leasehold.token'], caller.token);
        assert.equal(release.attributes['leasehold.lease.result'], 'released');
      } finally {
        telemetry.close();
        await lh.close();
      }
    }));

  it('makes one span per election term, from won to given up, with its token', () =>
    withSchema('otel election', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      // Made before instrument(): the instrumentation is told of existing elections too.
      const election = lh.elect('importer', { ttl: '30s' });
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        const elected = election.events.once('election:elected', { timeoutMs: LIVENESS_MS });
        await election.start();
        const { token } = await elected;
        assert.equal(spans('election term importer').length, 0, 'open while the term lasts');
        await election.close();
        const term = only('election term importer');
        assert.equal(term.attributes['leasehold.election.name'], 'importer');
        assert.equal(term.attributes['leasehold.token'], token);
        assert.equal(typeof term.attributes['leasehold.election.revoked_reason'], 'string');
      } finally {
        telemetry.close();
        await lh.close();
      }
    }));

  it('makes a span per HTTP request, a child of the caller traceparent, and a task enqueued by the route carries it', () =>
    withSchema('otel http', async (schema) => {
      exporter.reset();
      const lh = Leasehold.fromEngine(await schema.engine());
      const app = await buildApp({ lh });
      // Instrumented after the app was built: the service asks at each request.
      const telemetry = instrument(lh, { tracerProvider, metrics: false });
      try {
        const client = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
        const created = await app.inject({
          method: 'POST',
          url: '/api/tasks',
          headers: { traceparent: client },
          payload: { task_data: { n: 1 } },
        });
        assert.equal(created.statusCode, 201, created.body);
        const task = created.json<{ id: number }>();
        const missing = await app.inject({ method: 'GET', url: '/api/tasks/999999?x=1' });
        assert.equal(missing.statusCode, 404);

        const post = only('POST /api/tasks');
        assert.equal(post.kind, SpanKind.SERVER);
        assert.equal(post.spanContext().traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
        assert.equal(post.parentSpanContext?.spanId, '00f067aa0ba902b7');
        assert.equal(post.attributes['http.route'], '/api/tasks');
        assert.equal(post.attributes['http.response.status_code'], 201);
        const job = await lh.jobs.get(task.id);
        const carried = TRACEPARENT.exec(job?.headers.traceparent ?? '');
        assert.ok(carried, 'the task carries the request span');
        assert.equal(carried[2], post.spanContext().spanId);

        const get = only('GET /api/tasks/:id');
        assert.equal(get.attributes['url.path'], '/api/tasks/999999');
        assert.equal(get.attributes['http.response.status_code'], 404);
        assert.equal(get.status.code, SpanStatusCode.UNSET, 'a 4xx is the caller error');
        assert.equal(get.parentSpanContext, undefined);
      } finally {
        telemetry.close();
        await app.close();
        await lh.close();
      }
    }));

  it('records the claimed and completed counters and the job duration through an OTel meter', () =>
    withSchema('otel metrics', async (schema) => {
      const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
      const reader = new PeriodicExportingMetricReader({
        exporter: metricExporter,
        exportIntervalMillis: 3_600_000,
      });
      const meterProvider = new MeterProvider({ readers: [reader] });
      const lh = Leasehold.fromEngine(await schema.engine());
      const telemetry = instrument(lh, { meterProvider, tracing: false });
      try {
        let completed = 0;
        const worker = lh.worker({
          queues: 'mail',
          pollInterval: 50,
          handler: async () => 'ok',
        });
        worker.events.on('job:completed', () => void completed++);
        await worker.start();
        await lh.queue('mail').enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
        await waitFor('three completions', () => completed === 3);
        assert.ok(await lh.leases.acquire('x', { holder: 'a', ttl: '30s' }));
        await worker.stop();
        await reader.forceFlush();
        const exported = metricExporter.getMetrics().at(-1);
        const metrics = new Map(
          exported!.scopeMetrics
            .filter((s) => s.scope.name === 'leasehold')
            .flatMap((s) => s.metrics)
            .map((m) => [m.descriptor.name, m]),
        );
        const sum = (name: string, queue = 'mail'): number =>
          (metrics.get(name)?.dataPoints ?? [])
            .filter((p) => p.attributes['messaging.destination.name'] === queue)
            .reduce((total, p) => total + (p.value as number), 0);
        assert.equal(sum('leasehold.jobs.claimed'), 3);
        assert.equal(sum('leasehold.jobs.completed'), 3);
        const durations = metrics.get('leasehold.job.duration')?.dataPoints ?? [];
        assert.equal(
          durations.reduce((n, p) => n + (p.value as { count: number }).count, 0),
          3,
        );
        assert.equal(metrics.get('leasehold.job.duration')?.descriptor.unit, 's');
        const acquisitions = metrics.get('leasehold.lease.acquisitions')?.dataPoints ?? [];
        assert.deepEqual(
          acquisitions.map((p) => [p.attributes['leasehold.lease.result'], p.value]),
          [['acquired', 1]],
        );
        const calls = metrics.get('leasehold.engine.call.duration')?.dataPoints ?? [];
        assert.ok(
          calls.some(
            (p) =>
              p.attributes['leasehold.engine.operation'] === 'jobClaimBatch' &&
              p.attributes['leasehold.outcome'] === 'ok',
          ),
          'engine calls by operation and outcome',
        );
      } finally {
        telemetry.close();
        await lh.close();
        await meterProvider.shutdown();
      }
    }));

  it('refuses bad options naming the field, and a second instrumentation of one Leasehold', () => {
    const lh = Leasehold.memory();
    for (const [options, field] of [
      [null, 'options'],
      [{ tracing: 'yes' }, 'tracing'],
      [{ metrics: 1 }, 'metrics'],
      [{ tracerProvider: {} }, 'tracerProvider'],
      [{ meterProvider: 'global' }, 'meterProvider'],
    ] as const) {
      assert.throws(
        () => instrument(lh, options as never),
        (error: unknown) => error instanceof InvalidArgumentError && error.details.field === field,
        JSON.stringify(options),
      );
    }
    assert.equal(lh.instrumentation, undefined, 'bad input installs nothing');
    const first = instrument(lh, { tracerProvider });
    assert.throws(() => instrument(lh, { tracerProvider }), ConflictError);
    first.close();
    instrument(lh, { tracerProvider }).close();
    assert.equal(lh.instrumentation, undefined);
    return lh.close();
  });
});
