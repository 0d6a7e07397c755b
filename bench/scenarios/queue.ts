/**
 * leasehold's queue measured the way users run it, one function per measurement: a burn-down
 * of no-op jobs through one worker (claims sized to free slots, batched outcomes), bulk and
 * single enqueue, the idle latency from enqueue to handler start, and sustained load. The
 * families under this directory put these beside the peers.
 */
import type { ConnectOptions } from '../../src/leasehold-options.js';
import { Leasehold } from '../../src/leasehold.js';
import { Countdown, type DrainResult } from '../lib/countdown.js';
import { dropSchema, freshSchema } from '../lib/database.js';
import type { IdleSetup } from '../lib/idle-latency.js';
import { timedLoops } from '../lib/loops.js';
import {
  runSustained,
  SUSTAINED_QUEUE,
  type SustainedOptions,
  type SustainedResult,
} from '../lib/sustained.js';
import { FULL_TELEMETRY, withTelemetry, type TelemetrySetup } from '../lib/telemetry.js';

const QUEUE = 'bench';

async function withLeasehold<T>(
  url: string,
  options: Omit<ConnectOptions, 'connectionString'>,
  fn: (lh: Leasehold) => Promise<T>,
): Promise<T> {
  const schema = freshSchema('bench_lh_queue');
  const lh = await Leasehold.connect({ connectionString: url, schema, migrate: true, ...options });
  try {
    return await fn(lh);
  } finally {
    await lh.close();
    await dropSchema(url, schema);
  }
}

/**
 * A tuned worker; `undefined` stands for the defaults, `lh.worker({ queues, handler })`, and
 * `{ concurrency }` alone for the defaults at that concurrency (compared with graphile-worker's
 * defaults at the same concurrency).
 */
export type DrainShape = BurnDownOptions | DefaultsAt | undefined;

export interface DefaultsAt {
  defaultsAtConcurrency: number;
}

export interface BurnDownOptions {
  concurrency: number;
  maxClaimBatch: number;
  /** Delete jobs as they complete (graphile-worker's behaviour) instead of keeping them. */
  removeOnComplete?: boolean;
  /** With the library's Prometheus metrics observing (`lh.metrics()`, decision 0258). */
  metrics?: boolean;
  /**
   * With OpenTelemetry tracing and metrics on (`instrument(lh)`, decision 0260; the SDK as
   * bench/lib/telemetry.ts sets it up), from before the jobs are enqueued: they carry a
   * traceparent, and each claim and handler run makes its span.
   */
  telemetry?: boolean | TelemetrySetup;
}

/** The tuned pool: the worker needs a few connections (claims, outcomes, renewals, presence). */
const TUNED_POOL = 12;

async function enqueueNoops(lh: Leasehold, n: number): Promise<void> {
  const queue = lh.queue(QUEUE);
  for (let i = 0; i < n; i += 5_000)
    await queue.enqueueMany(
      Array.from({ length: Math.min(5_000, n - i) }, () => ({ payload: {} })),
    );
}

/**
 * Drains `n` pre-enqueued no-op jobs; the rate runs from the worker's start to the last
 * completion *written* (the `job:completed` event follows the outcome statement).
 */
export function leaseholdDrain(
  url: string,
  n: number,
  o: DrainShape,
  limitMs: number,
): Promise<DrainResult> {
  const tuned = o && !('defaultsAtConcurrency' in o) ? o : undefined;
  const concurrency = o && 'defaultsAtConcurrency' in o ? o.defaultsAtConcurrency : undefined;
  return withLeasehold(url, tuned ? { poolSize: TUNED_POOL } : {}, (lh) =>
    tuned?.telemetry
      ? withTelemetry(
          lh,
          () => drain(lh, n, tuned, concurrency, limitMs),
          tuned.telemetry === true ? FULL_TELEMETRY : tuned.telemetry,
        )
      : drain(lh, n, tuned, concurrency, limitMs),
  );
}

async function drain(
  lh: Leasehold,
  n: number,
  tuned: BurnDownOptions | undefined,
  concurrency: number | undefined,
  limitMs: number,
): Promise<DrainResult> {
  await enqueueNoops(lh, n);
  if (tuned?.metrics) lh.metrics();
  const handler = async (): Promise<undefined> => undefined;
  const worker = tuned
    ? lh.worker({
        queues: QUEUE,
        concurrency: tuned.concurrency,
        maxClaimBatch: tuned.maxClaimBatch,
        removeOnComplete: tuned.removeOnComplete ?? false,
        handler,
      })
    : concurrency !== undefined
      ? lh.worker({ queues: QUEUE, concurrency, handler })
      : lh.worker({ queues: QUEUE, handler });
  const countdown = new Countdown(n);
  worker.events.on('job:completed', () => countdown.add());
  await worker.start();
  const result = await countdown.wait(limitMs);
  await worker.stop();
  return result;
}

/** The pull consumer's shape: `loops` receivers, each taking `max` with `receiveMany`. */
export interface PullShape {
  loops: number;
  max: number;
  /** Delete each job at its ack instead of keeping it completed. */
  removeOnAck?: boolean;
}

/**
 * Drains `n` pre-enqueued no-op jobs through the pull consumer (decision 0246): each loop takes
 * up to `max` messages in one claim and acks them together (one completion statement), keeping
 * the completed jobs (or deleting them, `removeOnAck`). Timed like the push worker: from the first receive to the last ack written.
 */
export function leaseholdPullDrain(
  url: string,
  n: number,
  shape: PullShape,
  limitMs: number,
): Promise<DrainResult> {
  return withLeasehold(url, { poolSize: TUNED_POOL }, async (lh) => {
    await enqueueNoops(lh, n);
    const queue = lh.queue(QUEUE);
    const countdown = new Countdown(n);
    let running = true;
    const loops = Array.from({ length: shape.loops }, async () => {
      while (running) {
        const messages = await queue.receiveMany({
          max: shape.max,
          visibility: '60s',
          wait: 200,
          removeOnAck: shape.removeOnAck ?? false,
        });
        await Promise.all(messages.map((m) => m.ack()));
        for (let i = 0; i < messages.length; i++) countdown.add();
      }
    });
    const result = await countdown.wait(limitMs);
    running = false;
    await Promise.all(loops);
    return result;
  });
}

/** Jobs per second of a full burn-down of `n` jobs (for quick checks of a queue change). */
export async function leaseholdBurnDown(
  url: string,
  n: number,
  o: BurnDownOptions,
): Promise<number> {
  return (await leaseholdDrain(url, n, o, 3_600_000)).rate;
}

/** One `enqueueMany` call with `n` jobs (one statement per 1,000); jobs/s. */
export function leaseholdBulkEnqueue(url: string, n: number): Promise<number> {
  return withLeasehold(url, {}, async (lh) => {
    const jobs = Array.from({ length: n }, (_, i) => ({ payload: { i } }));
    await lh.queue(QUEUE).enqueue({ warm: true }); // connects (the other systems do the same)
    const started = performance.now();
    await lh.queue(QUEUE).enqueueMany(jobs);
    return n / ((performance.now() - started) / 1000);
  });
}

/** Single `enqueue` calls from `callers` concurrent loops for `seconds` (default pool of 10); jobs/s. */
export function leaseholdSingleEnqueue(
  url: string,
  seconds: number,
  callers: number,
): Promise<number> {
  return withLeasehold(url, {}, (lh) => {
    const queue = lh.queue(QUEUE);
    return timedLoops(callers, seconds, (_, i) => queue.enqueue({ i }));
  });
}

/** An idle worker, one job at a time (idle-latency.ts times enqueue call → handler's first line). */
export function leaseholdIdleSetup(url: string, notifications: boolean): IdleSetup {
  return (started, use) =>
    withLeasehold(url, {}, async (lh) => {
      const worker = lh.worker({
        queues: 'latency',
        concurrency: 1,
        notifications,
        pollInterval: notifications ? '2s' : '100ms',
        handler: async () => started(),
      });
      await worker.start();
      const queue = lh.queue('latency');
      try {
        return await use((i) => queue.enqueue({ i }));
      } finally {
        await worker.stop();
      }
    });
}

/** Enqueues at `ratePerSecond` for `seconds` while a worker tuned with `o` works. */
export function leaseholdSustained(
  url: string,
  o: BurnDownOptions,
  options: SustainedOptions,
): Promise<SustainedResult> {
  return runSustained(url, options, async (picked) => {
    const schema = freshSchema('bench_lh_sustained');
    const lh = await Leasehold.connect({
      connectionString: url,
      schema,
      poolSize: TUNED_POOL,
      migrate: true,
    });
    const worker = lh.worker({
      queues: SUSTAINED_QUEUE,
      concurrency: o.concurrency,
      maxClaimBatch: o.maxClaimBatch,
      removeOnComplete: o.removeOnComplete ?? false,
      handler: async (job) => {
        picked((job.payload as { t: number }).t);
      },
    });
    await worker.start();
    return { schema, client: 'leasehold', close: () => lh.close() };
  });
}
