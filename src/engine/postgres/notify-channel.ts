/**
 * The NOTIFY channel of a schema, in its own module so that the context (which sends on it) and
 * the migrations (whose functions send on it; decision 0255) name it alike.
 */
import { createHash } from 'node:crypto';

/** PostgreSQL's NAMEDATALEN - 1; schema names are ASCII (validated), so bytes are characters. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * One channel per schema, topics travel in the payload. A channel is an identifier of at most
 * 63 bytes: LISTEN silently truncates a longer one and pg_notify rejects it, so with a schema
 * name over 53 characters nothing was ever delivered. Such names keep their first 44 characters
 * and gain a hash of the whole name, which keeps channels distinct.
 */
export function notifyChannelOf(schema: string): string {
  const channel = `leasehold_${schema}`;
  if (channel.length <= MAX_IDENTIFIER_BYTES) return channel;
  const hash = createHash('sha1').update(schema).digest('hex').slice(0, 8);
  return `leasehold_${schema.slice(0, 44)}_${hash}`;
}

/** The schema name inside a quoted schema identifier (sql-identifiers.ts: no quote inside). */
export function unquoteSchema(quotedSchema: string): string {
  return quotedSchema.slice(1, -1);
}
