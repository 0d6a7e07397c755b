/**
 * The JSON body parser: Fastify's own (which refuses `__proto__` and `constructor.prototype`
 * keys), behind a nesting limit. Without the limit, a 40 KB body of 20,000 nested arrays
 * parsed fine and then overflowed the stack when the engine serialised it for PostgreSQL: a
 * 500 (found by test/service/fuzz.test.ts). Real task data and metadata nest a few levels.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidArgumentError } from '../core/errors.js';

export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in a JSON text, not counting brackets in strings. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

export function jsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (jsonDepth(text) > MAX_JSON_DEPTH) {
      done(new InvalidArgumentError('body', `must not nest deeper than ${MAX_JSON_DEPTH} levels`));
      return;
    }
    parse(request, text, done);
  });
}
