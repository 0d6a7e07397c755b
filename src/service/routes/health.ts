import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { ServiceContext } from '../context.js';
import { ErrorResponse } from '../schemas/common.js';

const Health = Type.Object({
  status: Type.Literal('ok'),
  instance: Type.String(),
  databaseTime: Type.String({ format: 'date-time' }),
});

/** Liveness and readiness in one: ok only when the database answers. Public: no key needed. */
export function healthRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get('/healthz', {
    config: { scope: 'public' },
    schema: {
      operationId: 'getHealth',
      tags: ['operations'],
      summary: 'ok when this instance can reach the database; 503 otherwise.',
      response: { 200: Health, 503: ErrorResponse },
    },
    handler: async () => ({
      status: 'ok' as const,
      instance: ctx.instanceId,
      databaseTime: (await ctx.lh.now()).toISOString(),
    }),
  });
}
