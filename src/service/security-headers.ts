/**
 * Security headers on every answer: API JSON, the dashboard page and its assets, errors, and
 * the event stream. They are set on the raw response as the request arrives, so answers that
 * bypass Fastify's reply (the hijacked SSE stream, framework errors) carry them too.
 *
 * The policy is the dashboard's: scripts, styles and fetches from this origin only, no inline
 * script, never framed. Swagger UI at /docs gets its own, slightly wider policy (docsCsp).
 * There are no CORS headers anywhere: the API is not meant to be called from pages of other
 * origins, and a browser then refuses to hand such a page the answer (decision 0403).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Swagger UI sets style attributes from its scripts (so `style-src 'unsafe-inline'`), and shows
 * inline SVG icons as data: URLs; its scripts are files, so script-src stays 'self'.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

export function applySecurityHeaders(response: ServerResponse): void {
  if (response.headersSent) return;
  for (const [name, value] of HEADER_ENTRIES) response.setHeader(name, value);
}

export function securityHeaders(app: FastifyInstance): void {
  // A callback hook, as app.ts explains.
  app.addHook('onRequest', (_request, reply, done) => {
    applySecurityHeaders(reply.raw);
    done();
  });
}
