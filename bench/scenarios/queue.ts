/**
 * leasehold's queue measured the way users run it: a burn-down of no-op jobs through one
 * worker process (claims sized to free slots, batched outcomes), and the idle latency from
 * enqueue to handler start, with LISTEN/NOTIFY and by polling alone.
 */
import { Leasehold } from '../../src/leasehold.js';
import { dropSchema, freshSchema } from '../lib/database.js';
import { percentile } from '../lib/stats.js';

async function withLeasehold<T>(url: string, fn: (lh: Leasehold) => Promise<T>): Promise<T> {
  const schema = freshSchema('bench_lh_queue');
  const lh = await Leasehold.connect({
    connectionString: url,
    schema,
    poolSize: 12,
    migrate: true,
  });
  try {
    return await fn(lh);
  } finally {
    await lh.close();
    await dropSchema(url, schema);
  }
}

export interface BurnDownOptions {
  concurrency: number;
  maxClaimBatch: number;
}

/** Jobs per second from the first claim to the last completion written. */
export function leaseholdBurnDown(url: string, n: number, o: BurnDownOptions): Promise<number> {
  return withLeasehold(url, async (lh) => {
    const queue = lh.queue('bench');
    for (let i = 0; i < n; i += 5_000)
      await queue.enqueueMany(
        Array.from({ length: Math.min(5_000, n - i) }, () => ({ payload: {} })),
      );
    let done = 0;
    let finish!: () => void;
    const allDone = new Promise<void>((resolve) => (finish = resolve));
    const worker = lh.worker({
      queues: 'bench',
      concurrency: o.concurrency,
      maxClaimBatch: o.maxClaimBatch,
      leaseTtl: '60s',
      handler: async () => undefined,
    });
    worker.events.on('job:completed', () => {
      if (++done === n) finish();
    });
    const started = performance.now();
    await worker.start();
    await allDone;
    const rate = n / ((performance.now() - started) / 1000);
    await worker.stop();
    return rate;
  });
}

export interface LatencyResult {
  p50: number;
  p95: number;
  max: number;
}

/** Idle worker; one job at a time; ms from the enqueue call to the handler's first line. */
export function leaseholdIdleLatency(
  url: string,
  samples: number,
  notifications: boolean,
): Promise<LatencyResult> {
  return withLeasehold(url, async (lh) => {
    let onStart: (() => void) | undefined;
    const worker = lh.worker({
      queues: 'latency',
      concurrency: 1,
      notifications,
      pollInterval: notifications ? '2s' : '100ms',
      handler: async () => onStart?.(),
    });
    await worker.start();
    const queue = lh.queue('latency');
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20)); // let the worker go idle
      const started = new Promise<number>(
        (resolve) => (onStart = () => resolve(performance.now())),
      );
      const sentAt = performance.now();
      await queue.enqueue({ i });
      latencies.push((await started) - sentAt);
    }
    await worker.stop();
    return {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      max: Math.max(...latencies),
    };
  });
}
