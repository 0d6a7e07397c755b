/**
 * API keys with scopes. Scopes nest: `admin` includes `write`, which includes `read`.
 * - read: GET routes and the dashboard;
 * - write: lease and task operations on one's own behalf;
 * - admin: deleting other holders' leases, controlling the generator.
 *
 * Keys are kept only as SHA-256 digests and compared digest to digest with timingSafeEqual,
 * so neither memory dumps nor response timing reveal a key. `hashApiKeys` turns the parsed
 * configuration into digests at once, so the caller holds no plain key either; no key, plain
 * or hashed, is ever logged or put in an answer (decision 0402). With no keys configured, auth is
 * off: the server refuses to bind a non-loopback address that way unless told `insecure`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { InvalidArgumentError, LeaseholdError } from '../core/errors.js';

export type Scope = 'read' | 'write' | 'admin';
const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

export interface ApiKeyConfig {
  /** A name for logs (never the key itself). */
  name: string;
  key: string;
  scope: Scope;
}

/** A key as kept: its name, its scope and the SHA-256 digest of the key (never the key). */
export interface HashedApiKey {
  readonly name: string;
  readonly scope: Scope;
  readonly sha256: Buffer;
}

export interface Principal {
  readonly name: string;
  readonly scope: Scope;
}

const MIN_KEY_LENGTH = 16;

const SHA256_BYTES = 32;

/** Validates the configured keys and keeps only their digests. */
export function hashApiKeys(keys: readonly (ApiKeyConfig | HashedApiKey)[]): HashedApiKey[] {
  return keys.map((k, i) => {
    if (!SCOPES.includes(k.scope))
      throw new InvalidArgumentError(`apiKeys[${i}].scope`, `must be one of ${SCOPES.join(', ')}`);
    if ('sha256' in k) {
      if (!Buffer.isBuffer(k.sha256) || k.sha256.length !== SHA256_BYTES)
        throw new InvalidArgumentError(`apiKeys[${i}].sha256`, 'must be a 32-byte SHA-256 digest');
      return { name: k.name, scope: k.scope, sha256: Buffer.from(k.sha256) };
    }
    if (typeof k.key !== 'string' || k.key.length < MIN_KEY_LENGTH)
      throw new InvalidArgumentError(
        `apiKeys[${i}].key`,
        `must be at least ${MIN_KEY_LENGTH} characters`,
      );
    return { name: k.name, scope: k.scope, sha256: digest(k.key) };
  });
}

export class ApiKeyAuth {
  private readonly keys: readonly HashedApiKey[];

  constructor(keys: readonly (ApiKeyConfig | HashedApiKey)[]) {
    this.keys = hashApiKeys(keys);
  }

  get enabled(): boolean {
    return this.keys.length > 0;
  }

  /** The principal a request authenticates as; throws `unauthorized` when keys are on and none matches. */
  authenticate(request: FastifyRequest): Principal {
    if (!this.enabled) return { name: 'anonymous', scope: 'admin' };
    const presented = presentedKey(request);
    if (presented === undefined)
      throw new LeaseholdError('unauthorized', 'send an API key as "Authorization: Bearer <key>"');
    const candidate = digest(presented);
    // Compare against every key, always, so the time taken does not depend on which matched.
    let match: HashedApiKey | undefined;
    for (const key of this.keys) if (timingSafeEqual(key.sha256, candidate)) match ??= key;
    if (!match) throw new LeaseholdError('unauthorized', 'the API key is not valid');
    return { name: match.name, scope: match.scope };
  }

  static allows(principal: Principal, needed: Scope): boolean {
    return RANK[principal.scope] >= RANK[needed];
  }
}

export function requireScope(principal: Principal, needed: Scope): void {
  if (!ApiKeyAuth.allows(principal, needed))
    throw new LeaseholdError(
      'forbidden',
      `this operation needs the "${needed}" scope; the key "${principal.name}" has "${principal.scope}"`,
    );
}

/**
 * Parses `LEASEHOLD_API_KEYS`: comma-separated `scope:key` or `name:scope:key` entries,
 * e.g. `admin:9f2…,ci:write:4ab…`.
 */
export function parseApiKeys(text: string | undefined): ApiKeyConfig[] {
  if (!text || text.trim() === '') return [];
  return text.split(',').map((entry, i) => {
    const parts = entry.trim().split(':');
    const [name, scope, key] =
      parts.length >= 3
        ? [parts[0]!, parts[1]!, parts.slice(2).join(':')]
        : [`key${i + 1}`, parts[0]!, parts[1] ?? ''];
    if (!SCOPES.includes(scope as Scope))
      throw new InvalidArgumentError(
        'LEASEHOLD_API_KEYS',
        `entry ${i + 1} must be "scope:key" or "name:scope:key" with scope read, write or admin`,
      );
    return { name, scope: scope as Scope, key };
  });
}

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.startsWith('Bearer ')) return header.slice(7).trim();
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey;
  return undefined;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
