/**
 * Listens. Everything else (routes, auth, validation) is in app.ts, which never listens.
 * Refuses to serve a non-loopback address without API keys unless `insecure` is set: an open
 * lease service on a network lets anyone release anyone's lease.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidArgumentError } from '../core/errors.js';
import type { ConnectOptions } from '../leasehold-options.js';
import type { MaintainerOptions } from '../queue/maintenance/maintainer.js';
import { buildApp, type BuildAppOptions } from './app.js';
import { DEFAULT_REPLY_TIMEOUT_MS } from './reply-deadline.js';

/**
 * How the service connects to its database (`leasehold serve`, the demo): an outage must turn
 * into a quick 503, not a hanging request. The reply deadline (1.5 s, reply-deadline.ts) answers
 * first; these bound what the request left behind, so a silent database does not keep the pool's
 * connections for long, and the service recovers by itself when it answers again.
 */
export const SERVICE_DATABASE_OPTIONS = {
  connectTimeoutMs: 2_000,
  statementTimeoutMs: 2_000,
  queryTimeoutMs: 3_000,
} as const satisfies Partial<ConnectOptions>;

export interface ServerOptions extends BuildAppOptions {
  host?: string;
  port?: number;
  /** Serve without API keys on a non-loopback address. */
  insecure?: boolean;
  /**
   * Queue housekeeping beside the service (rescue expired task leases, mark silent workers
   * dead, prune): on by default, since the task API relies on it; every instance runs one and
   * each cycle runs on only one of them. `false` when something else runs it.
   */
  maintenance?: MaintainerOptions | false;
}

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly url: string;
  close(): Promise<void>;
}

export function isLoopback(host: string): boolean {
  return (
    host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 4000;
  if (!isLoopback(host) && (options.apiKeys ?? []).length === 0 && !options.insecure) {
    throw new InvalidArgumentError(
      'host',
      `refusing to listen on ${host} without API keys: set LEASEHOLD_API_KEYS, or pass --insecure`,
    );
  }
  const app = await buildApp({
    ...options,
    replyTimeoutMs: options.replyTimeoutMs ?? DEFAULT_REPLY_TIMEOUT_MS,
  });
  await app.listen({ host, port });
  const maintainer =
    options.maintenance === false ? undefined : options.lh.maintainer(options.maintenance ?? {});
  maintainer?.start();
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    app,
    url: `http://${shownHost}:${actualPort}`,
    close: async () => {
      await maintainer?.stop();
      await app.close();
    },
  };
}
