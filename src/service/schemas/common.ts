/**
 * Schemas shared by the routes. They validate requests (TypeBox compiles them) and generate the
 * OpenAPI document at /docs, so the contract is written once. Limits come from core/validate.ts,
 * the same ones the library applies.
 */
import { Type } from 'typebox';
import { ERROR_CODES } from '../../core/errors.js';
import { LIMITS } from '../../core/validate.js';

/**
 * A resource, holder, processor or queue name: what `requireName` accepts. No control
 * characters, and no lone surrogates: PostgreSQL would store one as U+FFFD, so the name read
 * back would differ from the one sent (found by test/service/injection.test.ts).
 */
export const Name = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: LIMITS.nameMaxLength,
    pattern:
      '^(?:[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])*$',
    description,
  });

/** Free text stored as it is sent (a task's error): no NUL, no lone surrogates. */
export const StorableText = (options: { minLength: number; maxLength: number }) =>
  Type.String({
    ...options,
    pattern: '^(?:[^\\u0000\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])*$',
  });

export const FencingTokenSchema = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'Fencing token of the term (leases) or the claim generation (tasks).',
});

export const IdParams = Type.Object(
  { id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) },
  { additionalProperties: false },
);

export const Paging = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.listMaxLimit, default: 100 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
  },
  { additionalProperties: false },
);

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(Object.keys(ERROR_CODES).map((c) => Type.Literal(c))),
      message: Type.String(),
      details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
  },
  { description: 'Every error: a stable code from the error table and a message for humans.' },
);

export const JsonObject = Type.Object({}, { additionalProperties: true });
