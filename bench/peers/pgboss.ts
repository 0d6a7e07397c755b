/**
 * pg-boss measured in its fastest documented shape for a burn-down (batches of 500 per fetch)
 * and per job (its default batch of one), with LISTEN/NOTIFY on for the latency scenario.
 */
import { PgBoss } from 'pg-boss';
import { dropSchema, freshSchema } from '../lib/database.js';
import { percentile } from '../lib/stats.js';

export type PgBossMode = 'fast' | 'default';
const QUEUE = 'bench';

async function withBoss<T>(
  url: string,
  options: { notify?: boolean },
  fn: (boss: PgBoss) => Promise<T>,
): Promise<T> {
  const schema = freshSchema('bench_pgboss');
  const boss = new PgBoss({
    connectionString: url,
    schema,
    schedule: false,
    supervise: false,
    useListenNotify: options.notify ?? false,
  });
  boss.on('error', () => {});
  await boss.start();
  try {
    await boss.createQueue(QUEUE, options.notify ? { notify: true } : {});
    return await fn(boss);
  } finally {
    await boss.stop({ graceful: false }).catch(() => {});
    await dropSchema(url, schema);
  }
}

export function pgBossBurnDown(url: string, n: number, mode: PgBossMode): Promise<number> {
  return withBoss(url, {}, async (boss) => {
    for (let i = 0; i < n; i += 5_000)
      await boss.insert(
        QUEUE,
        Array.from({ length: Math.min(5_000, n - i) }, () => ({ data: {} })),
      );
    let done = 0;
    let finish!: () => void;
    const allDone = new Promise<void>((resolve) => (finish = resolve));
    const started = performance.now();
    await boss.work(
      QUEUE,
      { batchSize: mode === 'fast' ? 500 : 1, pollingIntervalSeconds: 0.5 },
      async (jobs) => {
        done += jobs.length;
        if (done >= n) finish();
      },
    );
    await allDone;
    return n / ((performance.now() - started) / 1000);
  });
}

export function pgBossBulkEnqueue(url: string, n: number): Promise<number> {
  return withBoss(url, {}, async (boss) => {
    const jobs = Array.from({ length: n }, (_, i) => ({ data: { i } }));
    const started = performance.now();
    await boss.insert(QUEUE, jobs);
    return n / ((performance.now() - started) / 1000);
  });
}

export function pgBossSingleEnqueue(url: string, n: number, callers: number): Promise<number> {
  return withBoss(url, {}, async (boss) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: callers }, async () => {
        while (next++ < n) await boss.send(QUEUE, {});
      }),
    );
    return n / ((performance.now() - started) / 1000);
  });
}

export function pgBossLatency(
  url: string,
  samples: number,
): Promise<{ p50: number; p95: number; p99: number }> {
  return withBoss(url, { notify: true }, async (boss) => {
    let onStart: (() => void) | undefined;
    await boss.work(QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async () => onStart?.());
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = new Promise<number>(
        (resolve) => (onStart = () => resolve(performance.now())),
      );
      await new Promise((r) => setTimeout(r, 20));
      const sent = performance.now();
      await boss.send(QUEUE, { i });
      latencies.push((await started) - sent);
    }
    return {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
    };
  });
}
