/**
 * Sustained load: enqueue at a fixed rate while the system works, then report what it cost.
 * Jobs are enqueued in small batches every tick (the due count since the start, so a slow
 * enqueue is caught up on the next tick), each stamped with its send time, and the handler
 * records the pickup latency (send → handler start). Afterwards: WAL written per job (the
 * `pg_current_wal_lsn()` delta, which includes the server's background writes), and the schema's
 * dead tuples and size once the system's connections have closed.
 */
import { dropSchema, schemaFootprint, walPosition, type SchemaFootprint } from './database.js';
import { percentiles, sleep, type Percentiles } from './stats.js';

const TICK_MS = 10;

export interface SustainedSystem {
  readonly schema: string;
  /** Enqueues `count` jobs whose payload is `{ t: sentAt }`. */
  enqueue(count: number, sentAt: number): Promise<void>;
  /** Stops the workers and closes every pool. */
  close(): Promise<void>;
}

/** Starts a system whose handler calls `picked(payload.t)` first thing. */
export type StartSustained = (picked: (sentAt: number) => void) => Promise<SustainedSystem>;

export interface SustainedResult extends SchemaFootprint {
  readonly ratePerSecond: number;
  readonly sent: number;
  readonly processed: number;
  /** Jobs processed per second of the enqueue window and the drain after it. */
  readonly throughput: number;
  /** False when the backlog had not drained within the drain limit. */
  readonly caughtUp: boolean;
  readonly pickupMs: Percentiles;
  readonly walBytesPerJob: number;
}

export async function runSustained(
  url: string,
  options: { ratePerSecond: number; seconds: number; drainLimitMs: number },
  start: StartSustained,
): Promise<SustainedResult> {
  const pickups: number[] = [];
  const system = await start((sentAt) => pickups.push(performance.now() - sentAt));
  let closed = false;
  try {
    const walStart = await walPosition(url);
    const began = performance.now();
    const sent = await pace(system, options.ratePerSecond, options.seconds);
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

async function pace(system: SustainedSystem, rate: number, seconds: number): Promise<number> {
  const began = performance.now();
  const end = began + seconds * 1000;
  let sent = 0;
  for (let now = began; now < end; now = performance.now()) {
    const due = Math.floor(((now - began) / 1000) * rate) - sent;
    if (due > 0) {
      await system.enqueue(due, now);
      sent += due;
    }
    await sleep(TICK_MS);
  }
  return sent;
}
