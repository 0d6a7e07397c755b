/**
 * Serves the dashboard built from web/ (web/dist: index.html and assets/). Its security headers
 * (a Content-Security-Policy of same-origin scripts, styles and fetches with no inline script,
 * no framing, no MIME sniffing, no referrer) are set on every answer by security-headers.ts.
 * The page holds no secrets: it reads everything through the API with the key the user enters,
 * so the page and its assets are public routes.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
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
  app.get('/', { config: { scope: 'public' }, schema: { hide: true } }, async (_request, reply) => {
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
