/**
 * pg-boss measured with its defaults (`boss.work(queue, handler)`: one job per fetch, then a
 * 2 s poll) and in its fastest shapes for a backlog. It documents no throughput preset, so two
 * shapes of its documented batch mode are tried, as for leasehold: batches of 500 or 1,000 per
 * fetch, `burstWhenBatchFull` (fetch again at once while batches come back full) and 4 or 2
 * local workers. Draining 20k jobs on the 2-core benchmark machine, b500 × 4 gave 7.8k jobs/s
 * and b1000 × 2 gave 9.3k, against 1.0k for batches of 500 polled every 0.5 s without burst,
 * and 0.5 jobs/s for the defaults (one job per 2 s poll). A batch counts as done
 * when its handler returns, before its completion is written: a little in pg-boss's favour.
 * LISTEN/NOTIFY is on for the latency scenarios, idle and sustained (the queue's `notify` and
 * `useListenNotify`): without it a worker whose batch came back short waits for its poll.
 */
import { PgBoss, type WorkOptions } from 'pg-boss';
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

export interface PgBossShape {
  batchSize: number;
  localConcurrency: number;
}
export const PGBOSS_FAST_SHAPES: readonly PgBossShape[] = [
  { batchSize: 500, localConcurrency: 4 },
  { batchSize: 1_000, localConcurrency: 2 },
];

/** The shape the like-for-like burn-down and the sustained load use (bench/scenarios). */
export const PGBOSS_NAMED_SHAPE: PgBossShape = PGBOSS_FAST_SHAPES[1]!;

const QUEUE = SUSTAINED_QUEUE;

/** A started PgBoss on `schema` (its tables made on first start), with no scheduler or supervisor. */
export async function startBoss(url: string, schema: string, notify: boolean): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema,
    schedule: false,
    supervise: false,
    useListenNotify: notify,
  });
  boss.on('error', () => {});
  await boss.start();
  return boss;
}

async function withBoss<T>(
  url: string,
  options: { notify?: boolean },
  fn: (boss: PgBoss) => Promise<T>,
): Promise<T> {
  const schema = freshSchema('bench_pgboss');
  const boss = await startBoss(url, schema, options.notify ?? false);
  try {
    await boss.createQueue(QUEUE, options.notify ? { notify: true } : {});
    return await fn(boss);
  } finally {
    await boss.stop({ graceful: false }).catch(() => {});
    await dropSchema(url, schema);
  }
}

/** Drains `n` pre-enqueued no-op jobs; `shape` undefined runs the defaults. */
export function pgBossDrain(
  url: string,
  n: number,
  shape: PgBossShape | undefined,
  limitMs: number,
): Promise<DrainResult> {
  return withBoss(url, {}, async (boss) => {
    for (let i = 0; i < n; i += 5_000)
      await boss.insert(
        QUEUE,
        Array.from({ length: Math.min(5_000, n - i) }, () => ({ data: {} })),
      );
    const countdown = new Countdown(n);
    const options: WorkOptions = shape ? { ...shape, burstWhenBatchFull: true } : {};
    await boss.work(QUEUE, options, async (jobs) => countdown.add(jobs.length));
    return countdown.wait(limitMs);
  });
}

/** One `insert` call with `n` jobs; jobs/s. */
export function pgBossBulkEnqueue(url: string, n: number): Promise<number> {
  return withBoss(url, {}, async (boss) => {
    const jobs = Array.from({ length: n }, (_, i) => ({ data: { i } }));
    await boss.send(QUEUE, { warm: true });
    const started = performance.now();
    await boss.insert(QUEUE, jobs);
    return n / ((performance.now() - started) / 1000);
  });
}

/** Single `send` calls from `callers` concurrent loops for `seconds` (its default pool of 10); jobs/s. */
export function pgBossSingleEnqueue(
  url: string,
  seconds: number,
  callers: number,
): Promise<number> {
  return withBoss(url, {}, (boss) =>
    timedLoops(callers, seconds, (_, i) => boss.send(QUEUE, { i })),
  );
}

/** Idle worker with LISTEN/NOTIFY, one job per fetch: enqueue → handler start. */
export function pgBossIdleSetup(url: string): IdleSetup {
  return (started, use) =>
    withBoss(url, { notify: true }, async (boss) => {
      await boss.work(QUEUE, async () => started());
      return use((i) => boss.send(QUEUE, { i }));
    });
}

/**
 * The sustained load (lib/sustained.ts) worked by pg-boss in its named shape (batches of 1,000,
 * two local workers, fetching again at once while batches come back full), woken by
 * LISTEN/NOTIFY when a batch came back short; the load is sent with its `insert`.
 */
export function pgBossSustained(url: string, options: SustainedOptions): Promise<SustainedResult> {
  return runSustained(url, options, async (picked) => {
    const schema = freshSchema('bench_pgboss_sustained');
    const boss = await startBoss(url, schema, true);
    try {
      await boss.createQueue(QUEUE, { notify: true });
      await boss.work<{ t: number }>(
        QUEUE,
        { ...PGBOSS_NAMED_SHAPE, burstWhenBatchFull: true },
        async (jobs) => {
          for (const job of jobs) picked(job.data.t);
        },
      );
    } catch (error) {
      await boss.stop({ graceful: false }).catch(() => {});
      throw error;
    }
    return {
      schema,
      client: 'pgboss',
      // Every job was picked up before this is called (or the drain limit passed): a graceful
      // stop only waits for the last completions to be written.
      close: () => boss.stop({ graceful: true, timeout: 10_000 }),
    };
  });
}
