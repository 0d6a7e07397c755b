/**
 * graphile-worker measured the way its authors measure it (their "perf" preset: 24 concurrent
 * jobs, pool 25, a local queue of 500, completion and failure batching with no delay) and with
 * its defaults. Each run gets a schema of its own on the shared benchmark database.
 */
import { Logger, makeWorkerUtils, run, type Runner, type TaskList } from 'graphile-worker';
import { dropSchema, freshSchema } from '../lib/database.js';
import { percentile } from '../lib/stats.js';

export type GraphileMode = 'fast' | 'default';
const quiet = new Logger(() => () => {});

function runnerOptions(mode: GraphileMode) {
  return mode === 'fast'
    ? {
        concurrency: 24,
        maxPoolSize: 25,
        preset: {
          worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
        },
      }
    : {};
}

async function withUtils<T>(
  url: string,
  fn: (utils: Awaited<ReturnType<typeof makeWorkerUtils>>, schema: string) => Promise<T>,
): Promise<T> {
  const schema = freshSchema('bench_gw');
  const utils = await makeWorkerUtils({ connectionString: url, schema, logger: quiet });
  try {
    await utils.migrate();
    return await fn(utils, schema);
  } finally {
    await utils.release();
    await dropSchema(url, schema);
  }
}

/** Drains `n` pre-enqueued no-op jobs; returns jobs/s from worker start to the last completion. */
export function graphileBurnDown(url: string, n: number, mode: GraphileMode): Promise<number> {
  return withUtils(url, async (utils, schema) => {
    for (let i = 0; i < n; i += 5_000)
      await utils.addJobs(
        Array.from({ length: Math.min(5_000, n - i) }, () => ({ identifier: 'noop', payload: {} })),
      );
    let done = 0;
    let finish!: () => void;
    const allDone = new Promise<void>((resolve) => (finish = resolve));
    const taskList: TaskList = {
      noop: async () => {
        if (++done === n) finish();
      },
    };
    const started = performance.now();
    const runner: Runner = await run({
      connectionString: url,
      schema,
      taskList,
      noHandleSignals: true,
      logger: quiet,
      ...runnerOptions(mode),
    });
    await allDone;
    const ms = performance.now() - started;
    await runner.stop();
    return n / (ms / 1000);
  });
}

/** One `addJobs` call with `n` jobs; jobs/s. */
export function graphileBulkEnqueue(url: string, n: number): Promise<number> {
  return withUtils(url, async (utils) => {
    const specs = Array.from({ length: n }, (_, i) => ({ identifier: 'noop', payload: { i } }));
    const started = performance.now();
    await utils.addJobs(specs);
    return n / ((performance.now() - started) / 1000);
  });
}

/** `n` single `addJob` calls from `callers` concurrent loops; jobs/s. */
export function graphileSingleEnqueue(url: string, n: number, callers: number): Promise<number> {
  return withUtils(url, async (utils) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: callers }, async () => {
        while (next++ < n) await utils.addJob('noop', {});
      }),
    );
    return n / ((performance.now() - started) / 1000);
  });
}

/** Idle worker, one job at a time: enqueue→handler-start latency in ms (p50/p95/p99). */
export function graphileLatency(
  url: string,
  samples: number,
): Promise<{ p50: number; p95: number; p99: number }> {
  return withUtils(url, async (utils, schema) => {
    let onStart: (() => void) | undefined;
    const taskList: TaskList = { probe: async () => onStart?.() };
    const runner = await run({
      connectionString: url,
      schema,
      taskList,
      noHandleSignals: true,
      logger: quiet,
      concurrency: 1,
    });
    const latencies: number[] = [];
    try {
      for (let i = 0; i < samples; i++) {
        const started = new Promise<number>(
          (resolve) => (onStart = () => resolve(performance.now())),
        );
        await new Promise((r) => setTimeout(r, 20)); // let the worker go idle
        const sent = performance.now();
        await utils.addJob('probe', { i });
        latencies.push((await started) - sent);
      }
    } finally {
      await runner.stop();
    }
    return {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
    };
  });
}
