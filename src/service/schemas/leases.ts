import { Type } from 'typebox';
import { LIMITS } from '../../core/validate.js';
import { FencingTokenSchema, JsonObject, Name, Paging } from './common.js';

// `minimum` alone: it is above zero (an exclusiveMinimum beside it only repeated the bound).
const TtlSeconds = Type.Number({
  minimum: LIMITS.ttlMinMs / 1000,
  maximum: LIMITS.ttlMaxMs / 1000,
  description: 'Lease duration in seconds (default 30).',
});

export const LeaseSchema = Type.Object({
  id: Type.Integer(),
  resource: Type.String(),
  holder: Type.String(),
  token: Type.Integer(),
  metadata: Type.Union([JsonObject, Type.Null()]),
  state: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('released')]),
  createdAt: Type.String({ format: 'date-time' }),
  acquiredAt: Type.String({ format: 'date-time' }),
  renewedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  releasedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  expiresAt: Type.String({ format: 'date-time' }),
  renewCount: Type.Integer(),
  ttlMs: Type.Integer(),
});

export const LeaseList = Type.Object({ leases: Type.Array(LeaseSchema) });

export const AcquireBody = Type.Object(
  {
    resource: Name('The resource to lease.'),
    holder: Name('Who takes the lease (unique among live holders).'),
    ttlSeconds: Type.Optional(TtlSeconds),
    metadata: Type.Optional(JsonObject),
  },
  { additionalProperties: false },
);

export const TermBody = Type.Object(
  {
    resource: Name('The leased resource.'),
    holder: Name('The current holder.'),
    token: Type.Optional(FencingTokenSchema),
    ttlSeconds: Type.Optional(TtlSeconds),
  },
  { additionalProperties: false },
);

export const ReleaseBody = Type.Object(
  {
    resource: Name('The leased resource.'),
    holder: Name('The current holder.'),
    token: Type.Optional(FencingTokenSchema),
  },
  { additionalProperties: false },
);

export const DeleteByIdBody = Type.Object(
  {
    holder: Type.Optional(
      Name('Release only if this is the holder; omit (admin) to release whoever holds it.'),
    ),
    token: Type.Optional(FencingTokenSchema),
  },
  { additionalProperties: false },
);

export const LeaseListQuery = Type.Object(
  {
    ...Paging.properties,
    prefix: Type.Optional(Name('Only resources starting with this prefix.')),
  },
  { additionalProperties: false },
);
