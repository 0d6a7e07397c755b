/**
 * The HTTP service under test: an app built on a fresh schema and driven with `inject()` (no
 * port, no network), and a small `call()` that sends JSON (or a raw string, for malformed
 * bodies) and parses the answer.
 */
import type { FastifyInstance } from 'fastify';
import { Leasehold } from '../../src/leasehold.js';
import { buildApp, type BuildAppOptions } from '../../src/service/app.js';
import type { ApiKeyConfig } from '../../src/service/auth.js';
import { withSchema, type SchemaContext } from './database.js';

export type AppOptions = Omit<BuildAppOptions, 'lh'>;

/** Runs `fn` with an app on a fresh schema; the app is closed and the schema dropped after. */
export async function withApp(
  name: string,
  fn: (app: FastifyInstance, lh: Leasehold, schema: SchemaContext) => Promise<void>,
  options: AppOptions = {},
): Promise<void> {
  await withSchema(name, async (schema) => {
    const lh = Leasehold.fromEngine(await schema.engine());
    const app = await buildApp({ lh, ...options });
    try {
      await fn(app, lh, schema);
    } finally {
      await app.close();
    }
  });
}

export type Json = Record<string, unknown> & {
  error?: { code: string; message: string; details?: Record<string, unknown> };
};

export interface Answer {
  status: number;
  body: Json;
  headers: Record<string, unknown>;
  text: string;
}

/**
 * One request. An object payload is sent as JSON; a string payload is sent as it is (give
 * its content-type in `headers`), so tests can send broken JSON and other media types.
 */
export async function call(
  app: FastifyInstance,
  method: string,
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await app.inject({
    method: method as 'GET',
    url,
    headers:
      payload !== undefined && typeof payload !== 'string'
        ? { 'content-type': 'application/json', ...headers }
        : headers,
    payload:
      payload === undefined
        ? undefined
        : typeof payload === 'string'
          ? payload
          : JSON.stringify(payload),
  });
  const isJson = /application\/json/.test(String(response.headers['content-type'] ?? ''));
  return {
    status: response.statusCode,
    body: isJson && response.body ? (JSON.parse(response.body) as Json) : {},
    headers: response.headers,
    text: response.body,
  };
}

/** Bearer headers for a key. */
export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** One key per scope, for tests of authorization. */
export const SCOPED_KEYS = {
  read: 'reader-key-0123456789',
  write: 'writer-key-0123456789',
  admin: 'admin-key-0123456789abc',
} as const;

/** The service's key configuration for SCOPED_KEYS. */
export const SCOPED_API_KEYS: ApiKeyConfig[] = [
  { name: 'reader', key: SCOPED_KEYS.read, scope: 'read' },
  { name: 'writer', key: SCOPED_KEYS.write, scope: 'write' },
  { name: 'admin', key: SCOPED_KEYS.admin, scope: 'admin' },
];
