import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { generatorStatus, setGeneratorRunning } from '../../tasks/task-domain.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse } from '../schemas/common.js';

const Status = Type.Object({
  state: Type.Union([Type.Literal('started'), Type.Literal('stopped')]),
  runningOn: Type.Union([Type.String(), Type.Null()]),
  token: Type.Union([Type.Integer(), Type.Null()]),
  leaseExpiresAt: Type.Union([Type.String(), Type.Null()]),
  changedBy: Type.Union([Type.String(), Type.Null()]),
  changedAt: Type.Union([Type.String(), Type.Null()]),
});
const errors = { 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

/** Generator status and control: read from and written to the database, so every instance agrees. */
export function generatorRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get('/api/generator', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getGenerator',
      tags: ['generator'],
      summary: 'Whether the generator should run, and where it runs.',
      response: { 200: Status, ...errors },
    },
    handler: async () => generatorStatus(ctx.lh),
  });
  for (const action of ['start', 'stop'] as const) {
    app.post(`/api/generator/${action}`, {
      config: { scope: 'admin' },
      schema: {
        operationId: `${action}Generator`,
        tags: ['generator'],
        summary: `${action === 'start' ? 'Start' : 'Stop'} the generator on whichever instance leads.`,
        response: { 200: Status, ...errors },
      },
      handler: async (request) => {
        const status = await setGeneratorRunning(
          ctx.lh,
          action === 'start',
          `${request.principal.name}@${ctx.instanceId}`,
        );
        ctx.events.emit(`generator:${action === 'start' ? 'started' : 'stopped'}`, status);
        return status;
      },
    });
  }
}
