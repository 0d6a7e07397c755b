import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { NotFoundError } from '../../core/errors.js';
import {
  WORKER_KINDS,
  WORKER_STATUSES,
  type WorkerInfo,
  type WorkerStatus,
} from '../../core/types.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse } from '../schemas/common.js';

const WorkerSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  host: Type.String(),
  pid: Type.Integer(),
  queues: Type.Array(Type.String()),
  concurrency: Type.Integer(),
  status: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  lastSeenAt: Type.String({ format: 'date-time' }),
  inFlight: Type.Integer(),
  kind: Type.Union(
    WORKER_KINDS.map((k) => Type.Literal(k)),
    {
      description:
        '`library`: a worker of the toolkit; `http`: a task worker registered over HTTP.',
    },
  ),
});
const Query = Type.Object(
  {
    status: Type.Optional(Type.Union(WORKER_STATUSES.map((s) => Type.Literal(s)))),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);
const WorkerIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) });
const Registration = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    host: Type.String({ minLength: 1, maxLength: 256 }),
    pid: Type.Integer({ minimum: 0 }),
    queues: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
      minItems: 1,
      maxItems: 100,
    }),
    concurrency: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
const Heartbeat = Type.Object(
  {
    inFlight: Type.Integer({ minimum: 0 }),
    status: Type.Optional(
      Type.Union(
        WORKER_STATUSES.filter((s) => s !== 'dead').map((s) => Type.Literal(s)),
        { description: 'Said when it changes: `draining` on shutdown, then `stopped`.' },
      ),
    ),
  },
  { additionalProperties: false },
);
const WorkerAnswer = Type.Object({ worker: WorkerSchema });

function serializeWorker(w: WorkerInfo) {
  return {
    ...w,
    queues: [...w.queues],
    startedAt: w.startedAt.toISOString(),
    lastSeenAt: w.lastSeenAt.toISOString(),
  };
}

/**
 * Workers in the workers table: the toolkit's own (every instance's in-process workers) and task
 * workers that claim over HTTP, which register here and keep their row fresh with heartbeats
 * (decision 0264), so an operator sees every worker of the fleet in one list.
 */
export function workerRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get<{ Querystring: Static<typeof Query> }>('/api/workers', {
    config: { scope: 'read' },
    schema: {
      operationId: 'listWorkers',
      tags: ['operations'],
      summary: 'Workers of both kinds: status, host and pid, in-flight jobs, last seen.',
      querystring: Query,
      response: {
        200: Type.Object({ workers: Type.Array(WorkerSchema) }),
        400: ErrorResponse,
        503: ErrorResponse,
      },
    },
    handler: async (request) => {
      const workers = await ctx.lh.jobs.workers({
        ...(request.query.status ? { status: request.query.status as WorkerStatus } : {}),
        limit: request.query.limit ?? 200,
      });
      return { workers: workers.map(serializeWorker) };
    },
  });

  app.put<{ Params: Static<typeof WorkerIdParams>; Body: Static<typeof Registration> }>(
    '/api/workers/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'registerWorker',
        tags: ['operations'],
        summary:
          'Register an HTTP task worker (again): alive from now on, kept alive by its heartbeats.',
        params: WorkerIdParams,
        body: Registration,
        response: { 200: WorkerAnswer, 400: ErrorResponse, 503: ErrorResponse },
      },
      handler: async (request) => {
        const worker = await ctx.lh.jobs.registerWorker({
          ...request.body,
          id: request.params.id,
          kind: 'http',
        });
        return { worker: serializeWorker(worker) };
      },
    },
  );

  app.post<{ Params: Static<typeof WorkerIdParams>; Body: Static<typeof Heartbeat> }>(
    '/api/workers/:id/heartbeat',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'workerHeartbeat',
        tags: ['operations'],
        summary:
          "Refresh a registered worker's row (in flight, status); 404 when it is not registered.",
        params: WorkerIdParams,
        body: Heartbeat,
        response: { 200: WorkerAnswer, 400: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse },
      },
      handler: async (request) => {
        const worker = await ctx.lh.jobs.workerHeartbeat(request.params.id, {
          inFlight: request.body.inFlight,
          ...(request.body.status ? { status: request.body.status as WorkerStatus } : {}),
        });
        if (!worker) throw new NotFoundError('worker', request.params.id);
        return { worker: serializeWorker(worker) };
      },
    },
  );
}
