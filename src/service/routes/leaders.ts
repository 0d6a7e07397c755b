/**
 * Who leads each election and what each schedule last ran: GET /api/leaders and
 * GET /api/schedules, read-only. The same data reaches the dashboard through the snapshot.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { ServiceContext } from '../context.js';
import { readLeaders, readSchedules } from '../leadership.js';
import { ErrorResponse } from '../schemas/common.js';

const DateTime = Type.String({ format: 'date-time' });
const Token = Type.Integer({ description: 'Fencing token of the term.' });

const LeaderSchema = Type.Object({
  election: Type.String({ description: 'The name given to lh.elect (or `schedule:<name>`).' }),
  instanceId: Type.String({ description: 'The leader (or, when not active, the last one).' }),
  token: Token,
  electedAt: Type.String({ format: 'date-time', description: 'When this term began.' }),
  expiresAt: Type.String({ format: 'date-time', description: 'When it ends unless renewed.' }),
  state: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('released')], {
    description:
      'active: someone leads; expired: the leader stopped renewing; released: it stepped down.',
  }),
});

const ScheduleSchema = Type.Object({
  name: Type.String(),
  lastSlot: Type.String({ format: 'date-time', description: 'The newest slot claimed (run).' }),
  holder: Type.String({ description: 'The instance that ran it.' }),
  token: Type.Union([Token, Type.Null()]),
  claimedAt: DateTime,
  nextSlot: Type.Union([DateTime, Type.Null()], {
    description: 'The slot after it, as its runner computed it; null if unknown.',
  }),
  runs: Type.Integer({ description: 'Claimed slots still kept (old ones are pruned).' }),
});

const Query = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 200 })) },
  { additionalProperties: false },
);

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

export function leaderRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get<{ Querystring: Static<typeof Query> }>('/api/leaders', {
    config: { scope: 'read' },
    schema: {
      operationId: 'listLeaders',
      tags: ['operations'],
      summary: 'Leader elections: who leads each one, since when, with which token.',
      querystring: Query,
      response: { 200: Type.Object({ leaders: Type.Array(LeaderSchema) }), ...errors },
    },
    handler: async (request) => ({
      leaders: await readLeaders(ctx.lh, request.query.limit ?? 200),
    }),
  });

  app.get<{ Querystring: Static<typeof Query> }>('/api/schedules', {
    config: { scope: 'read' },
    schema: {
      operationId: 'listSchedules',
      tags: ['operations'],
      summary: 'Schedules: the newest slot each one ran, who ran it, the next slot, the runs kept.',
      querystring: Query,
      response: { 200: Type.Object({ schedules: Type.Array(ScheduleSchema) }), ...errors },
    },
    handler: async (request) => ({
      schedules: await readSchedules(ctx.lh, request.query.limit ?? 200),
    }),
  });
}
