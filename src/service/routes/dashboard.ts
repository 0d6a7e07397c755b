/**
 * Serves the dashboard built from web/ (web/dist: index.html and assets/), with security
 * headers: a strict Content-Security-Policy (same-origin scripts, styles and fetches only; no
 * inline script), no framing, no MIME sniffing, no referrer. The page holds no secrets: it
 * reads everything through the API with the key the user enters.
 */
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** web/dist from src/service/routes (sources) and from dist/service/routes (built) alike. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

export const DASHBOARD_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

export async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  const built = existsSync(`${DASHBOARD_DIR}index.html`);
  // Read once: the page is small and immutable for the life of the process.
  const page = built ? readFileSync(`${DASHBOARD_DIR}index.html`, 'utf8') : '';
  if (built) {
    await app.register(fastifyStatic, {
      root: `${DASHBOARD_DIR}assets`,
      prefix: '/assets/',
      decorateReply: false,
      setHeaders: (res) => {
        for (const [name, value] of Object.entries(DASHBOARD_HEADERS)) void res.header(name, value);
      },
    });
  }
  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    for (const [name, value] of Object.entries(DASHBOARD_HEADERS)) void reply.header(name, value);
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
