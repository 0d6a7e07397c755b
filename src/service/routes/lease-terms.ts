/**
 * Leases and elections over time (issue 30 part 6, decision 0267): the terms of one lease
 * resource or one election, newest first, each with its holder, token, start, end, how it ended
 * and whether it was a takeover. Read-only. A name never leased (or whose history was pruned
 * away) answers an empty list rather than 404: a console polling a resource that is about to be
 * created should not see an error.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import {
  TERMS_DEFAULT_LIMIT,
  TERMS_MAX_LIMIT,
  type LeaseTermView,
} from '../../core/lease-terms.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse, FencingTokenSchema, Name } from '../schemas/common.js';

const DateTime = Type.String({ format: 'date-time' });

const LeaseTermSchema = Type.Object({
  holder: Type.String({ description: 'Who held the term.' }),
  token: FencingTokenSchema,
  startedAt: Type.String({ format: 'date-time', description: 'When the term began.' }),
  endedAt: Type.Union([DateTime, Type.Null()], {
    description: 'When it was released or ran out; null while it is held.',
  }),
  ended: Type.Union(
    [Type.Literal('released'), Type.Literal('expired'), Type.Literal('superseded'), Type.Null()],
    {
      description:
        'released: its holder let it go; expired: it ran out; superseded: it ran out, another ' +
        'holder took over, and its holder then tried to renew it (and was refused); null: held.',
    },
  ),
  takeover: Type.Boolean({
    description: 'The term before it ran out (expired or superseded) under another holder.',
  }),
});

const TermsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: TERMS_MAX_LIMIT, default: TERMS_DEFAULT_LIMIT }),
    ),
  },
  { additionalProperties: false },
);
const ResourceParams = Type.Object(
  { resource: Name('The lease resource (URL-encoded).') },
  { additionalProperties: false },
);
const ElectionParams = Type.Object(
  { election: Name('The election name given to lh.elect (URL-encoded).') },
  { additionalProperties: false },
);

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

export type LeaseTermJson = Static<typeof LeaseTermSchema>;

export function termJson(term: LeaseTermView): LeaseTermJson {
  return {
    holder: term.holder,
    token: term.token,
    startedAt: term.startedAt.toISOString(),
    endedAt: term.endedAt?.toISOString() ?? null,
    ended: term.ended,
    takeover: term.takeover,
  };
}

export function leaseTermRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get<{ Params: Static<typeof ResourceParams>; Querystring: Static<typeof TermsQuery> }>(
    '/api/leases/:resource/terms',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listLeaseTerms',
        tags: ['leases'],
        summary:
          "A lease resource's terms, newest first: who held it, when, and how each ended " +
          '(recorded once lease term recording is on).',
        params: ResourceParams,
        querystring: TermsQuery,
        response: {
          200: Type.Object({
            resource: Type.String(),
            recording: Type.Boolean({
              description:
                'Whether lease terms are being recorded (off until lh.leases.setTermRecording(true)); ' +
                'while off, only the current term is known.',
            }),
            terms: Type.Array(LeaseTermSchema),
          }),
          ...errors,
        },
      },
      handler: async (request) => {
        const { resource } = request.params;
        const terms = await ctx.lh.leases.terms(resource, { limit: request.query.limit });
        const recording = await ctx.lh.leases.termRecording();
        return { resource, recording, terms: terms.map(termJson) };
      },
    },
  );

  app.get<{ Params: Static<typeof ElectionParams>; Querystring: Static<typeof TermsQuery> }>(
    '/api/leaders/:election/terms',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listElectionTerms',
        tags: ['operations'],
        summary: "An election's terms, newest first: who led, when, and how each term ended.",
        params: ElectionParams,
        querystring: TermsQuery,
        response: {
          200: Type.Object({ election: Type.String(), terms: Type.Array(LeaseTermSchema) }),
          ...errors,
        },
      },
      handler: async (request) => {
        const { election } = request.params;
        const terms = await ctx.lh.locks.electionTerms(election, { limit: request.query.limit });
        return { election, terms: terms.map(termJson) };
      },
    },
  );
}
