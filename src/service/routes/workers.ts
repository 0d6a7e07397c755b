import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { WORKER_STATUSES, type WorkerStatus } from '../../core/types.js';
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
});
const Query = Type.Object(
  {
    status: Type.Optional(Type.Union(WORKER_STATUSES.map((s) => Type.Literal(s)))),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);

/** Queue workers registered in the workers table (in-process workers of every instance). */
export function workerRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get<{ Querystring: Static<typeof Query> }>('/api/workers', {
    config: { scope: 'read' },
    schema: {
      operationId: 'listWorkers',
      tags: ['operations'],
      summary: 'Queue workers: status, host and pid, in-flight jobs, last seen.',
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
      return {
        workers: workers.map((w) => ({
          ...w,
          queues: [...w.queues],
          startedAt: w.startedAt.toISOString(),
          lastSeenAt: w.lastSeenAt.toISOString(),
        })),
      };
    },
  });
}
