/**
 * Sustained load: enqueue at a fixed rate while the system works, then report what it cost.
 * The load is offered from a process of its own (sustained-offer.ts, the system's own client),
 * as producers are deployed: an enqueuer inside the worker's process would take its CPU and
 * collect its garbage, and measure the two together. Jobs are enqueued in small batches every
 * tick (the due count since the start, so a slow enqueue is caught up on the next tick), each
 * stamped with its send time in absolute milliseconds (both processes read the same clock), and
 * the handler records the pickup latency (send → handler start). Afterwards: WAL written per job
 * (the `pg_current_wal_lsn()` delta, which includes the server's background writes), and the
 * schema's dead tuples and size once the system's connections have closed.
 */
import { dropSchema, schemaFootprint, walPosition, type SchemaFootprint } from './database.js';
import { startChild } from './child.js';
import { percentiles, sleep, type Percentiles } from './stats.js';

const TICK_MS = 10;

/** The queue (leasehold) and the task (graphile-worker) the scenario's workers take. */
export const SUSTAINED_QUEUE = 'bench';
export const SUSTAINED_TASK = 'tick';

/** The systems whose client can offer the load (sustained-offer.ts). */
export const OFFERING_CLIENTS = ['leasehold', 'graphile', 'pgboss'] as const;
export type OfferingClient = (typeof OFFERING_CLIENTS)[number];

/** The load: `ratePerSecond` for `seconds`, then up to `drainLimitMs` for a backlog to drain. */
export interface SustainedOptions {
  readonly ratePerSecond: number;
  readonly seconds: number;
  readonly drainLimitMs: number;
}

export interface SustainedSystem {
  readonly schema: string;
  /** Whose client the offering process uses, into `schema`. */
  readonly client: OfferingClient;
  /** Stops the workers and closes every pool. */
  close(): Promise<void>;
}

/** Absolute milliseconds, comparable between processes of one machine. */
export const absoluteNow = (): number => performance.timeOrigin + performance.now();

/** Starts a system whose handler calls `picked(payload.t)` first thing. */
export type StartSustained = (picked: (sentAt: number) => void) => Promise<SustainedSystem>;

export interface SustainedResult extends SchemaFootprint {
  readonly ratePerSecond: number;
  readonly sent: number;
  readonly processed: number;
  /** Jobs processed per second of the enqueue window and the drain after it. */
  readonly throughput: number;
  /**
   * Jobs processed per second of the enqueue window alone (by the moment the last batch was
   * sent): under a load above what the system can carry, the rate it takes in and works off
   * jobs together, its sustained maximum.
   */
  readonly windowThroughput: number;
  /** False when the backlog had not drained within the drain limit. */
  readonly caughtUp: boolean;
  readonly pickupMs: Percentiles;
  readonly walBytesPerJob: number;
}

export async function runSustained(
  url: string,
  options: SustainedOptions,
  start: StartSustained,
): Promise<SustainedResult> {
  const pickups: number[] = [];
  const system = await start((sentAt) => pickups.push(absoluteNow() - sentAt));
  let closed = false;
  try {
    const walStart = await walPosition(url);
    const offer = startChild('bench/lib/sustained-offer.ts', [
      system.client,
      url,
      system.schema,
      String(options.ratePerSecond),
      String(options.seconds),
    ]);
    let began: number;
    let sent: number;
    let inWindow: { processed: number; seconds: number };
    try {
      await offer.waitForLine(/^pacing$/);
      began = performance.now();
      const [, count] = await offer.waitForLine(/^sent (\d+)$/, options.seconds * 1000 + 180_000);
      sent = Number(count);
      inWindow = { processed: pickups.length, seconds: (performance.now() - began) / 1000 };
    } finally {
      await offer.stop();
    }
    const drainUntil = performance.now() + options.drainLimitMs;
    while (pickups.length < sent && performance.now() < drainUntil) await sleep(TICK_MS);
    const elapsed = (performance.now() - began) / 1000;
    const processed = pickups.length;
    await system.close();
    closed = true;
    const walBytes = Number((await walPosition(url)) - walStart);
    return {
      ratePerSecond: options.ratePerSecond,
      sent,
      processed,
      throughput: processed / elapsed,
      windowThroughput: inWindow.processed / inWindow.seconds,
      caughtUp: processed >= sent,
      pickupMs: percentiles(pickups),
      walBytesPerJob: walBytes / Math.max(1, sent),
      ...(await schemaFootprint(url, system.schema)),
    };
  } finally {
    if (!closed) await system.close().catch(() => {});
    await dropSchema(url, system.schema);
  }
}

/** Enqueues at `rate` for `seconds` through `enqueue`; returns how many were sent. */
export async function pace(
  enqueue: (count: number, sentAt: number) => Promise<void>,
  rate: number,
  seconds: number,
): Promise<number> {
  const began = performance.now();
  const end = began + seconds * 1000;
  let sent = 0;
  for (let now = began; now < end; now = performance.now()) {
    const due = Math.floor(((now - began) / 1000) * rate) - sent;
    if (due > 0) {
      await enqueue(due, absoluteNow());
      sent += due;
    }
    await sleep(TICK_MS);
  }
  return sent;
}
