/**
 * Serves the dashboard built from web/ (web/dist: index.html and assets/). Its security headers
 * (a Content-Security-Policy of same-origin scripts, styles and fetches with no inline script,
 * no framing, no MIME sniffing, no referrer) are set on every answer by security-headers.ts.
 * The page holds no secrets: it reads everything through the API with the key the user enters,
 * so the page and its assets are public routes.
 *
 * The page names its assets and the API relative to itself (`assets/app.js`, `api/events`), so
 * it works wherever the service is mounted (`/`, `/leasehold/` in another app, behind a proxy
 * that strips a prefix). That needs the page's URL to end in a slash: `/leasehold` is redirected
 * to `leasehold/`, relative too for the same reason.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { registerPublic } from '../route-scopes.js';

/** web/dist from src/service/routes (sources) and from dist/service/routes (built) alike. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

export async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  const built = existsSync(`${DASHBOARD_DIR}index.html`);
  // Read once: the page is small and immutable for the life of the process.
  const page = built ? readFileSync(`${DASHBOARD_DIR}index.html`, 'utf8') : '';
  if (built) {
    await registerPublic(app, fastifyStatic, {
      root: `${DASHBOARD_DIR}assets`,
      prefix: '/assets/',
      decorateReply: false,
    });
  }
  app.get('/', { config: { scope: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const slashed = withTrailingSlash(request);
    if (slashed !== undefined) return reply.redirect(slashed, 308);
    if (!built)
      return reply
        .code(503)
        .type('text/plain')
        .send(
          'The dashboard is not built: run `npm run build:web` (npm start and npm test do it).',
        );
    return reply.type('text/html; charset=utf-8').send(page);
  });
}

/**
 * The relative location that adds the missing trailing slash to the URL the client asked for
 * (`/leasehold?x=1` → `./leasehold/?x=1`), or undefined when it has one. Mounted in Express or
 * Connect, the client's URL is `originalUrl` (`url` has the mount path taken off).
 */
export function withTrailingSlash(request: FastifyRequest): string | undefined {
  const asked = (request.raw as { originalUrl?: string }).originalUrl ?? request.url;
  const queryAt = asked.indexOf('?');
  const path = queryAt < 0 ? asked : asked.slice(0, queryAt);
  if (path.endsWith('/')) return undefined;
  const last = path.slice(path.lastIndexOf('/') + 1);
  // `./` first: a segment with a colon would otherwise read as a URL scheme.
  return `./${last}/${queryAt < 0 ? '' : asked.slice(queryAt)}`;
}
