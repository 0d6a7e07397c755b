/**
 * Lease throughput: acquire+release pairs/s and renews/s with 8 concurrent holders, through the
 * library in process and through the HTTP service (8 keep-alive clients), beside the raw-SQL
 * baseline of the same statements.
 */
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { dropSchema, freshSchema } from '../lib/database.js';

const HOLDERS = 8;

async function withLeasehold<T>(url: string, fn: (lh: Leasehold) => Promise<T>): Promise<T> {
  const schema = freshSchema('bench_lh_leases');
  const lh = await Leasehold.connect({
    connectionString: url,
    schema,
    poolSize: HOLDERS,
    migrate: true,
  });
  try {
    return await fn(lh);
  } finally {
    await lh.close();
    await dropSchema(url, schema);
  }
}

async function loop(seconds: number, body: (i: number) => Promise<void>): Promise<number> {
  let count = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: HOLDERS }, async (_, i) => {
      while (performance.now() < deadline) {
        await body(i);
        count++;
      }
    }),
  );
  return count / seconds;
}

export function leasePairsInProcess(url: string, seconds: number): Promise<number> {
  return withLeasehold(url, (lh) =>
    loop(seconds, async (i) => {
      const lease = await lh.leases.acquire(`r${i}`, { holder: `h${i}`, ttl: 30_000 });
      await lh.leases.release(lease!);
    }),
  );
}

export function leaseRenewsInProcess(url: string, seconds: number): Promise<number> {
  return withLeasehold(url, async (lh) => {
    const leases = await Promise.all(
      Array.from({ length: HOLDERS }, (_, i) =>
        lh.leases.acquire(`r${i}`, { holder: `h${i}`, ttl: 600_000 }),
      ),
    );
    return loop(seconds, async (i) => {
      await lh.leases.renew(leases[i]!, { ttl: 600_000 });
    });
  });
}

async function withService<T>(url: string, fn: (base: string) => Promise<T>): Promise<T> {
  return withLeasehold(url, async (lh) => {
    const server = await startServer({ lh, port: 0 });
    try {
      return await fn(server.url);
    } finally {
      await server.close();
    }
  });
}

const post = (url: string, method: string, body: unknown) =>
  fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (r) => {
    if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<{ token: number }>;
  });

export function leasePairsHttp(url: string, seconds: number): Promise<number> {
  return withService(url, (base) =>
    loop(seconds, async (i) => {
      const lease = await post(`${base}/api/leases`, 'POST', {
        resource: `r${i}`,
        holder: `h${i}`,
        ttlSeconds: 30,
      });
      await post(`${base}/api/leases/release`, 'DELETE', {
        resource: `r${i}`,
        holder: `h${i}`,
        token: lease.token,
      });
    }),
  );
}

export function leaseRenewsHttp(url: string, seconds: number): Promise<number> {
  return withService(url, async (base) => {
    const tokens = await Promise.all(
      Array.from(
        { length: HOLDERS },
        async (_, i) =>
          (
            await post(`${base}/api/leases`, 'POST', {
              resource: `r${i}`,
              holder: `h${i}`,
              ttlSeconds: 600,
            })
          ).token,
      ),
    );
    return loop(seconds, async (i) => {
      await post(`${base}/api/leases/renew`, 'PUT', {
        resource: `r${i}`,
        holder: `h${i}`,
        token: tokens[i],
        ttlSeconds: 600,
      });
    });
  });
}
