/**
 * Lease throughput: acquire+release pairs/s and renews/s with 8 concurrent holders, each on its
 * own resource, through the library in process and through the HTTP service driven by 8
 * keep-alive clients: the service in its own process (`leasehold serve`, as it is deployed),
 * and the service started in the benchmark's own process. The clients are the benchmark's lean
 * load generator (http-load.ts); the service in its own process is also measured with
 * node:http's client, to show what a heavier client costs on the shared cores.
 */
import { Agent, request } from 'node:http';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { startChild } from '../lib/child.js';
import { dropSchema, freshSchema } from '../lib/database.js';
import { HttpLoadConnection } from '../lib/http-load.js';
import { timedLoops } from '../lib/loops.js';

/** Holders (and HTTP clients) by default; the family also runs 64 for the HTTP targets. */
export const HOLDERS = 8;
/** The in-process pool, whatever the holders: 8 connections, as at the default. */
const POOL = 8;

export interface LeaseThroughput {
  pairs: number;
  renews: number;
}

/** The library in this process, one pool of 8 connections, with `holders` concurrent holders. */
export async function leaseholdLeaseThroughput(
  url: string,
  seconds: number,
  holders = HOLDERS,
): Promise<LeaseThroughput> {
  const loop = (body: (i: number) => Promise<void>): Promise<number> =>
    timedLoops(holders, seconds, body);
  const schema = freshSchema('bench_lh_leases');
  const lh = await Leasehold.connect({
    connectionString: url,
    schema,
    poolSize: POOL,
    migrate: true,
  });
  try {
    const pairs = await loop(async (i) => {
      const lease = await lh.leases.acquire(`r${i}`, { holder: `h${i}`, ttl: 30_000 });
      await lh.leases.release(lease!);
    });
    const leases = await Promise.all(
      Array.from({ length: holders }, (_, i) =>
        lh.leases.acquire(`q${i}`, { holder: `h${i}`, ttl: 600_000 }),
      ),
    );
    const renews = await loop(async (i) => {
      await lh.leases.renew(leases[i]!, { ttl: 600_000 });
    });
    return { pairs, renews };
  } finally {
    await lh.close();
    await dropSchema(url, schema);
  }
}

type Call = (method: string, path: string, body: unknown) => Promise<{ token: number }>;

/** How the benchmark talks HTTP: its lean load generator, or node:http's client. */
export type HttpLoadClient = 'load-generator' | 'node-http';

/** One `Call` per holder, each on its own keep-alive connection, and a way to close them. */
async function openCalls(
  base: string,
  kind: HttpLoadClient,
  holders: number,
): Promise<{ calls: Call[]; close: () => void }> {
  if (kind === 'node-http') {
    const agent = new Agent({ keepAlive: true, maxSockets: holders });
    const call = nodeHttpCall(base, agent);
    return { calls: Array.from({ length: holders }, () => call), close: () => agent.destroy() };
  }
  const connections = await Promise.all(
    Array.from({ length: holders }, () => HttpLoadConnection.open(base)),
  );
  return {
    calls: connections.map((connection) => async (method, path, body) => {
      const answer = await connection.request(method, path, body);
      if (answer.status >= 300)
        throw new Error(`${method} ${path}: ${answer.status} ${answer.body}`);
      return JSON.parse(answer.body) as { token: number };
    }),
    close: () => connections.forEach((c) => c.close()),
  };
}

function nodeHttpCall(base: string, agent: Agent): Call {
  const { hostname, port } = new URL(base);
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = request(
        {
          agent,
          hostname,
          port,
          method,
          path,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            if ((res.statusCode ?? 500) >= 300)
              reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
            else resolve(JSON.parse(text) as { token: number });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** Pairs, then renews, through the service at `base` with `holders` keep-alive clients. */
async function overHttp(
  base: string,
  seconds: number,
  kind: HttpLoadClient,
  holders = HOLDERS,
): Promise<LeaseThroughput> {
  const loop = (body: (i: number) => Promise<void>): Promise<number> =>
    timedLoops(holders, seconds, body);
  const { calls, close } = await openCalls(base, kind, holders);
  try {
    const pairs = await loop(async (i) => {
      const lease = await calls[i]!('POST', '/api/leases', {
        resource: `r${i}`,
        holder: `h${i}`,
        ttlSeconds: 30,
      });
      await calls[i]!('DELETE', '/api/leases/release', {
        resource: `r${i}`,
        holder: `h${i}`,
        token: lease.token,
      });
    });
    const tokens = await Promise.all(
      calls.map(
        async (call, i) =>
          (
            await call('POST', '/api/leases', {
              resource: `q${i}`,
              holder: `h${i}`,
              ttlSeconds: 600,
            })
          ).token,
      ),
    );
    const renews = await loop(async (i) => {
      await calls[i]!('PUT', '/api/leases/renew', {
        resource: `q${i}`,
        holder: `h${i}`,
        token: tokens[i],
        ttlSeconds: 600,
      });
    });
    return { pairs, renews };
  } finally {
    close();
  }
}

/** The HTTP service in its own process (`leasehold serve`), as it is deployed. */
export async function httpLeaseThroughput(
  url: string,
  seconds: number,
  kind: HttpLoadClient,
  holders = HOLDERS,
): Promise<LeaseThroughput> {
  const schema = freshSchema('bench_lh_http');
  const service = startChild('src/cli/main.ts', [
    'serve',
    '--database-url',
    url,
    '--schema',
    schema,
    '--port',
    '0',
    '--no-generator',
    '--maintenance-interval',
    '3600000',
  ]);
  try {
    const [, base] = await service.waitForLine(/listening on (http:\/\/\S+)/);
    return await overHttp(base!, seconds, kind, holders);
  } finally {
    await service.stop();
    await dropSchema(url, schema);
  }
}

/**
 * The same service started in this process (the clients share its event loop): beside the
 * figure above, it separates the cost of the HTTP stack from the cost of a second process.
 */
export async function httpSameProcessLeaseThroughput(
  url: string,
  seconds: number,
): Promise<LeaseThroughput> {
  const schema = freshSchema('bench_lh_http_local');
  const lh = await Leasehold.connect({
    connectionString: url,
    schema,
    poolSize: POOL,
    migrate: true,
  });
  const server = await startServer({ lh, port: 0, maintenance: false });
  try {
    return await overHttp(server.url, seconds, 'load-generator');
  } finally {
    await server.close();
    await lh.close();
    await dropSchema(url, schema);
  }
}
