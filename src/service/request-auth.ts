/**
 * Who a request is, for the scope check every route makes (route-scopes.ts). The service either
 * checks its own API keys (auth.ts), or asks a function of the embedding app (its sessions, its
 * tokens), or, when the app guards the whole mount itself, lets every request through as admin.
 * The choice is explicit when the service is mounted in someone else's app (decision 0262): an
 * empty key list there is refused rather than read as "no authentication".
 */
import type { FastifyRequest } from 'fastify';
import { InvalidArgumentError, LeaseholdError } from '../core/errors.js';
import {
  ApiKeyAuth,
  SCOPES,
  type ApiKeyConfig,
  type HashedApiKey,
  type Principal,
} from './auth.js';

/**
 * The embedding app's own check: the principal a request acts as (its name for logs and its
 * scope), or null when it is not authenticated (answered 401). May be async.
 */
export type AuthorizeRequest = (
  request: FastifyRequest,
) => Principal | null | Promise<Principal | null>;

/**
 * - `{ apiKeys }`: leasehold's own API-key check (at least one key);
 * - `{ authorize }`: the app's function decides who the request is, the routes' scopes still apply;
 * - `false`: no check here; every request is admin. Only behind the app's own guard (an
 *   `onRequest` hook on the mount) or on a loopback-only server.
 */
export type LeaseholdAuth =
  | { readonly apiKeys: readonly (ApiKeyConfig | HashedApiKey)[] }
  | { readonly authorize: AuthorizeRequest }
  | false;

export interface RequestAuthenticator {
  /** Whether requests are checked (the OpenAPI document then states a security requirement). */
  readonly checks: boolean;
  authenticate(request: FastifyRequest): Principal | Promise<Principal>;
}

const ANONYMOUS_ADMIN: Principal = { name: 'anonymous', scope: 'admin' };

export function requestAuthenticator(auth: LeaseholdAuth | undefined): RequestAuthenticator {
  if (auth === false) return { checks: false, authenticate: () => ANONYMOUS_ADMIN };
  if (typeof auth !== 'object' || auth === null)
    throw new InvalidArgumentError(
      'auth',
      'must be { apiKeys: [...] }, { authorize: (request) => principal } or false',
    );
  if ('authorize' in auth) {
    if (typeof auth.authorize !== 'function')
      throw new InvalidArgumentError('auth.authorize', 'must be a function');
    return { checks: true, authenticate: (request) => viaFunction(auth.authorize, request) };
  }
  if (!Array.isArray(auth.apiKeys) || auth.apiKeys.length === 0)
    throw new InvalidArgumentError(
      'auth.apiKeys',
      'must hold at least one key (auth: false turns authentication off)',
    );
  const keys = new ApiKeyAuth(auth.apiKeys);
  return { checks: true, authenticate: (request) => keys.authenticate(request) };
}

function viaFunction(
  authorize: AuthorizeRequest,
  request: FastifyRequest,
): Principal | Promise<Principal> {
  const answer = authorize(request);
  return answer instanceof Promise ? answer.then(checkedPrincipal) : checkedPrincipal(answer);
}

function checkedPrincipal(principal: Principal | null): Principal {
  if (principal === null || principal === undefined)
    throw new LeaseholdError('unauthorized', 'the request is not authenticated');
  // A wrong answer from the app's function is a bug in the app, not the caller's fault: a 500.
  if (!SCOPES.includes(principal.scope))
    throw new Error(`auth.authorize returned the scope ${JSON.stringify(principal.scope)}`);
  return principal;
}
