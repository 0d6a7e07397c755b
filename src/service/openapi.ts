/**
 * The OpenAPI document served at /docs/json, shaped so standard tools accept it (issue 29,
 * decision 0257): Redocly's recommended rules pass, and generators such as openapi-typescript
 * produce a usable client. The routes' TypeBox schemas stay the single source of the contract;
 * this module only adds what the document needs around them:
 * - OpenAPI 3.1, whose schemas are JSON Schema 2020-12, the dialect TypeBox writes (3.0 has no
 *   numeric `exclusiveMinimum`);
 * - `servers`, a license, and each operation's security requirement from its route's scope
 *   (none on public routes), with the 401 and 403 answers a key check can give;
 * - one shared `Error` schema in components that every error answer references;
 * - request bodies that may be omitted documented as optional (TypeBox's `Undefined`, which
 *   lets the validator accept no body, has no JSON Schema spelling).
 * Every operation's `operationId` is written next to its route (`schema.operationId`).
 */
import type { SwaggerOptions } from '@fastify/swagger';
import type { RouteScope } from './route-scopes.js';
import { ErrorResponse } from './schemas/common.js';

/** The security scheme every secured operation names: an API key sent as a bearer token. */
const API_KEY_SCHEME = 'apiKey';

const ERROR_REF = '#/components/schemas/Error';
const ERROR_DESCRIPTION = (ErrorResponse as unknown as { description: string }).description;

const AUTH_ANSWERS: Record<string, string> = {
  '401': 'No API key, or one that is not valid.',
  '403': "The API key's scope does not allow this operation.",
};

/**
 * Options for @fastify/swagger; `authEnabled` says whether the service checks requests;
 * `serverUrl` is where the API is: `/` for the standalone service, the prefix it is mounted
 * under otherwise (fastify-plugin.ts). Paths are written without it, so a client generated from
 * the document is the same wherever the service is mounted.
 */
export function openapiOptions(authEnabled: boolean, serverUrl = '/'): SwaggerOptions {
  return {
    // The prefix is taken off the paths (the default, which needs a URL or an absolute path);
    // a relative server URL (the Express adapter's) comes with paths that never had one.
    stripBasePath: serverUrl.startsWith('/'),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'leasehold',
        description: 'Leases with fencing tokens, and a task queue, over HTTP.',
        version: '0.1.0',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Without a host: the document is right whatever address or proxy the service is reached by.
      servers: [{ url: serverUrl }],
      components: {
        securitySchemes: { [API_KEY_SCHEME]: { type: 'http', scheme: 'bearer' } },
        schemas: { Error: ErrorResponse as unknown as Record<string, unknown> },
      },
      security: authEnabled ? [{ [API_KEY_SCHEME]: [] }] : [],
    },
    transform: ({ schema, url, route }) => {
      if (!schema || schema.hide) return { schema, url };
      const scope = (route.config as { scope?: RouteScope } | undefined)?.scope ?? 'admin';
      const secured = authEnabled && scope !== 'public';
      const response = { ...(schema.response as Record<string, unknown> | undefined) };
      // A route answering text (metrics, the event stream) declares no response schema, so that
      // nothing changes in how it answers: its success is a string of the media types it
      // `produces`; its errors, like every error, are JSON.
      if (schema.response === undefined)
        response['200'] = {
          description: 'OK',
          content: Object.fromEntries(
            (schema.produces ?? ['application/json']).map((type) => [
              type,
              { schema: { type: 'string' } },
            ]),
          ),
        };
      for (const [code, answer] of Object.entries(response))
        if (answer === ErrorResponse) response[code] = errorAnswer(ERROR_DESCRIPTION);
      if (secured) {
        response['401'] ??= errorAnswer(AUTH_ANSWERS['401']!);
        // A read key is the least a key can be: only write and admin routes refuse one.
        if (scope !== 'read') response['403'] ??= errorAnswer(AUTH_ANSWERS['403']!);
      }
      return {
        url,
        schema: {
          ...schema,
          produces: undefined,
          ...(schema.body === undefined ? {} : { body: withoutUndefined(schema.body) }),
          response,
          // In OpenAPI 3.1 a requirement may name roles for a bearer scheme: the key's scope.
          security: secured ? [{ [API_KEY_SCHEME]: [scope] }] : [],
        },
      };
    },
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : {};
      markOptionalBodies(document);
      return document;
    },
  };
}

function errorAnswer(description: string): Record<string, unknown> {
  return { $ref: ERROR_REF, description };
}

// A body schema that accepted `undefined` is marked, so transformObject can find its
// requestBody (@fastify/swagger marks every one required) and mark it optional.
const OPTIONAL_BODY = 'x-leasehold-optional-body';

function withoutUndefined(body: unknown): unknown {
  const anyOf = (body as { anyOf?: unknown[] }).anyOf;
  if (!Array.isArray(anyOf)) return body;
  const kept = anyOf.filter((member) => (member as { type?: unknown }).type !== 'undefined');
  if (kept.length === anyOf.length) return body;
  return { ...(body as object), anyOf: kept, [OPTIONAL_BODY]: true };
}

interface RequestBody {
  required?: boolean;
  content?: Record<string, { schema?: Record<string, unknown> }>;
}

function markOptionalBodies(document: { paths?: object }): void {
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
  for (const operations of Object.values(paths))
    for (const operation of Object.values(operations)) {
      const body = (operation as { requestBody?: RequestBody }).requestBody;
      for (const media of Object.values(body?.content ?? {})) {
        if (!media.schema?.[OPTIONAL_BODY]) continue;
        delete media.schema[OPTIONAL_BODY];
        body!.required = false;
      }
    }
}
