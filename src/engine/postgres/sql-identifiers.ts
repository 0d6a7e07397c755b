import { requireSqlIdentifier } from '../../core/validate.js';

/**
 * The schema name is the only identifier ever spliced into SQL. It is validated to a strict
 * lower-case pattern and then quoted, so it can neither inject SQL nor change case.
 */
export function quoteSchema(schema: unknown): string {
  return `"${requireSqlIdentifier('schema', schema)}"`;
}
