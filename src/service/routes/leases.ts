/**
 * The lease routes of the seed's API, tightened: every body is validated, renew and release
 * accept the fencing token (optional for old clients, which are then guarded by holder only),
 * and a refusal says who holds the lease and until when.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { LeaseholdError } from '../../core/errors.js';
import { LeaseHeldError, LeaseLostError, NotFoundError } from '../../core/errors.js';
import type { Lease, LeaseListFilter } from '../../core/types.js';
import { requireScope } from '../auth.js';
import type { ServiceContext } from '../context.js';
import { ErrorResponse, IdParams } from '../schemas/common.js';
import {
  AcquireBody,
  DeleteByIdBody,
  LeaseList,
  LeaseListQuery,
  LeaseSchema,
  ReleaseBody,
  TermBody,
} from '../schemas/leases.js';
import { leaseJson } from '../serialize.js';

const DEFAULT_TTL_SECONDS = 30;
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse };

export function leaseRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { lh, events } = ctx;
  // Concurrent acquires, renews and releases from many clients share statements: lh.leases
  // coalesces them for every caller of the library (leases/lease-coalescers.ts, decision 0231).
  const list = (
    filter: LeaseListFilter,
    path: string,
    operationId: string,
    summary: string,
  ): void => {
    app.get<{ Querystring: Static<typeof LeaseListQuery> }>(path, {
      config: { scope: 'read' },
      schema: {
        operationId,
        tags: ['leases'],
        summary,
        querystring: LeaseListQuery,
        response: { 200: LeaseList, ...errors },
      },
      handler: async (request) => {
        const { limit, offset, prefix } = request.query;
        const leases = await lh.leases.list({
          state: filter,
          limit,
          offset,
          ...(prefix === undefined ? {} : { resourcePrefix: prefix }),
        });
        return { leases: leases.map(leaseJson) };
      },
    });
  };
  list('all', '/api/leases', 'listLeases', 'All leases (every resource ever leased).');
  list('active', '/api/leases/active', 'listActiveLeases', 'Leases held right now.');
  list(
    'expired',
    '/api/leases/expired',
    'listExpiredLeases',
    'Leases whose holder stopped renewing.',
  );
  list(
    'renewed',
    '/api/leases/renewed',
    'listRenewedLeases',
    'Leases renewed at least once in their current term.',
  );
  list('released', '/api/leases/released', 'listReleasedLeases', 'Leases their holder released.');

  app.post<{ Body: Static<typeof AcquireBody> }>('/api/leases', {
    config: { scope: 'write' },
    schema: {
      operationId: 'acquireLease',
      tags: ['leases'],
      summary:
        'Acquire a lease (201: a new term with a new token; 200: your live lease, extended).',
      body: AcquireBody,
      response: { 200: LeaseSchema, 201: LeaseSchema, 409: ErrorResponse, ...errors },
    },
    handler: async (request, reply) => {
      const { resource, holder, ttlSeconds, metadata } = request.body;
      const result = await lh.leases.tryAcquire(resource, {
        holder,
        ttl: Math.round((ttlSeconds ?? DEFAULT_TTL_SECONDS) * 1000),
        ...(metadata === undefined ? {} : { metadata: metadata as Record<string, unknown> }),
      });
      if (!result.acquired) {
        const current = result.current;
        events.emit('lease:refused', { resource, holder });
        throw new LeaseHeldError(
          resource,
          current?.holder ?? '(unknown)',
          current?.expiresAt ?? new Date(0),
        );
      }
      // A re-acquire by the live holder keeps its term: renewedAt is set only then.
      const newTerm = result.lease.renewedAt === null;
      const json = leaseJson(result.lease);
      events.emit(newTerm ? 'lease:acquired' : 'lease:renewed', json);
      return reply.code(newTerm ? 201 : 200).send(json);
    },
  });

  app.put<{ Body: Static<typeof TermBody> }>('/api/leases/renew', {
    config: { scope: 'write' },
    schema: {
      operationId: 'renewLease',
      tags: ['leases'],
      summary: 'Renew a live lease you hold.',
      body: TermBody,
      response: { 200: LeaseSchema, 409: ErrorResponse, ...errors },
    },
    handler: async (request) => {
      const { resource, holder, token, ttlSeconds } = request.body;
      const ttlMs =
        ttlSeconds !== undefined
          ? Math.round(ttlSeconds * 1000)
          : ((await lh.leases.get(resource))?.ttlMs ?? DEFAULT_TTL_SECONDS * 1000);
      // A client of the seed's API that never saw a token is guarded by its holder name alone.
      const lease =
        token === undefined
          ? await lh.leases.renewAsHolder({ resource, holder }, { ttl: ttlMs })
          : await lh.leases.renew({ resource, holder, token }, { ttl: ttlMs });
      if (!lease) throw lost(resource, 'it expired, was released or is held by someone else');
      const json = leaseJson(lease);
      events.emit('lease:renewed', json);
      return json;
    },
  });

  app.delete<{ Body: Static<typeof ReleaseBody> }>('/api/leases/release', {
    config: { scope: 'write' },
    schema: {
      operationId: 'releaseLease',
      tags: ['leases'],
      summary: 'Release a live lease you hold, so others need not wait for its expiry.',
      body: ReleaseBody,
      response: { 200: LeaseSchema, 409: ErrorResponse, ...errors },
    },
    handler: async (request) => {
      const { resource, holder, token } = request.body;
      const lease =
        token === undefined
          ? await lh.leases.releaseAsHolder({ resource, holder })
          : await lh.leases.releaseTerm({ resource, holder, token });
      if (!lease) throw lost(resource, 'it was not live and held by this holder');
      const json = leaseJson(lease);
      events.emit('lease:released', json);
      return json;
    },
  });

  app.get<{ Params: Static<typeof IdParams> }>('/api/leases/:id', {
    config: { scope: 'read' },
    schema: {
      operationId: 'getLease',
      tags: ['leases'],
      summary: 'One lease by id.',
      params: IdParams,
      response: { 200: LeaseSchema, 404: ErrorResponse, ...errors },
    },
    handler: async (request) =>
      leaseJson(await mustExist(await lh.leases.getById(request.params.id), request.params.id)),
  });

  app.delete<{ Params: Static<typeof IdParams>; Body: Static<typeof DeleteByIdBody> | undefined }>(
    '/api/leases/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'releaseLeaseById',
        tags: ['leases'],
        summary: "Release a lease by id: your own (give holder), or anyone's (admin).",
        params: IdParams,
        // A body is optional here: an administrator releases whoever holds the lease.
        body: Type.Union([DeleteByIdBody, Type.Undefined(), Type.Null()]),
        response: { 200: LeaseSchema, 404: ErrorResponse, 409: ErrorResponse, ...errors },
      },
      handler: async (request) => {
        const { id } = request.params;
        const holder = request.body?.holder;
        const token = request.body?.token;
        if (holder === undefined) requireScope(request.principal, 'admin');
        const existing = await mustExist(await lh.leases.getById(id), id);
        const lease = await lh.leases.releaseById(id, {
          ...(holder === undefined ? {} : { holder }),
          ...(token === undefined ? {} : { token }),
        });
        if (!lease)
          throw lost(existing.resource, 'it was not live, or not held by this holder and token');
        events.emit('lease:released', leaseJson(lease));
        return leaseJson(lease);
      },
    },
  );
}

async function mustExist(lease: Lease | null, id: number): Promise<Lease> {
  if (!lease) throw new NotFoundError('lease', id);
  return lease;
}

function lost(resource: string, reason: string): LeaseholdError {
  return new LeaseLostError(resource, reason);
}
