/**
 * The HTTP service, in this process, driven through its own client: several lease holders
 * (LeaseClient.hold: acquire, renewals, release) at once on a few shared resources, so the
 * service's coalescer sends their requests as many-lease statements (decision 0404), through the
 * proxy like every other role's. Each term does fenced increments under its token; the recording
 * engine records every element of the many-lease calls, so the lease checkers (token order,
 * overlap, expired renewal, fenced counter) judge this path like the library's own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaseClient } from '../../../../src/client/lease-client.js';
import type { HeldLease } from '../../../../src/core/held-lease.js';
import { startServer } from '../../../../src/service/server.js';
import type { ChildConfig } from '../config.js';
import { fencedIncrement, type IncrementTarget } from '../fenced-increment.js';

const CLIENTS = 3;
const RESOURCES = ['svc-0', 'svc-1', 'svc-2'];

export async function runService(
  config: ChildConfig,
  target: IncrementTarget,
  running: () => boolean,
): Promise<void> {
  const server = await startServer({ lh: target.lh, port: 0, maintenance: false });
  const client = new LeaseClient({ baseUrl: server.url, timeoutMs: 3_000 });
  for (let i = 0; i < CLIENTS; i++)
    void clientLoop(config, client, `${config.proc}#${config.incarnation}:h${i}`, target, running);
}

const between = (min: number, max: number): number => min + Math.random() * (max - min);

async function clientLoop(
  config: ChildConfig,
  client: LeaseClient,
  prefix: string,
  target: IncrementTarget,
  running: () => boolean,
): Promise<void> {
  const { ttlMs, renewEveryMs, marginMs } = config.lease;
  let attempt = 0;
  while (running()) {
    const resource = RESOURCES[Math.floor(Math.random() * RESOURCES.length)]!;
    // A fresh holder name per attempt: a re-acquire of our own live term would keep its token.
    const holder = `${prefix}:${++attempt}`;
    let term: HeldLease;
    try {
      term = await client.hold(resource, {
        holder,
        ttl: ttlMs,
        renewEvery: renewEveryMs,
        margin: marginMs,
      });
    } catch {
      await sleep(between(20, 150)); // held by another client, or the service cannot answer
      continue;
    }
    const until = Date.now() + between(300, 1_200);
    while (running() && Date.now() < until && term.isTrusted()) {
      await fencedIncrement(target, `lease:${resource}`, term.token);
      await sleep(between(50, 150));
    }
    await term.release().catch(() => {});
    await sleep(between(0, 100));
  }
}
