/**
 * Request validation with the route schemas (TypeBox, compiled once per route).
 *
 * Bodies are checked as sent: no coercion, no silent removal of unknown fields. Params and
 * query strings are text, so a field whose schema is a number or a boolean is converted first,
 * but only from its canonical spelling: `42`, `-1`, `0.5`, `true`, `false`. TypeBox's own
 * conversion is far more lenient (it reads `1.5` as the integer 1, `true` as 1 and `0x10` as
 * 16), which would let `DELETE /api/leases/1.9` release lease 1; anything else is left as text
 * and fails the type check with a 400 naming the field.
 */
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

const INTEGER = /^-?\d+$/;
const NUMBER = /^-?\d+(\.\d+)?$/;

interface PartSchema {
  type?: unknown;
  properties?: Record<string, { type?: unknown }>;
}

/** Converts the text fields of a params or querystring object that the schema types as numbers or booleans. */
export function convertTextFields(schema: PartSchema, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !schema.properties) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [name, text] of Object.entries(out)) {
    const type = schema.properties[name]?.type;
    if (typeof text !== 'string' || type === undefined) continue;
    if (type === 'integer' && INTEGER.test(text)) out[name] = Number(text);
    else if (type === 'number' && NUMBER.test(text)) out[name] = Number(text);
    else if (type === 'boolean' && (text === 'true' || text === 'false'))
      out[name] = text === 'true';
  }
  return out;
}

export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (value) => {
    const candidate = httpPart === 'body' ? value : convertTextFields(schema as PartSchema, value);
    if (check.Check(candidate)) return { value: candidate };
    const error: FastifySchemaValidationError[] = check.Errors(candidate);
    return { error };
  };
};
