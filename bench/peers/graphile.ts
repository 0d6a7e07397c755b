/**
 * graphile-worker measured in its fastest documented configuration (the one its performance
 * page reports its figures with: 24 concurrent jobs, pool 25, a local queue of 500, completion
 * and failure batching with no delay; worker.graphile.org/docs/performance) and with its
 * defaults (`run({ connectionString, taskList })`: one job at a time, pool 10). Each run gets a
 * schema of its own on the shared benchmark database. Burn-downs count a job done when its
 * handler returns, before its completion is written: a little in graphile-worker's favour.
 */
import {
  Logger,
  makeWorkerUtils,
  run,
  type RunnerOptions,
  type TaskList,
  type WorkerUtils,
} from 'graphile-worker';
import { Countdown, type DrainResult } from '../lib/countdown.js';
import { dropSchema, freshSchema } from '../lib/database.js';
import type { IdleSetup } from '../lib/idle-latency.js';
import { timedLoops } from '../lib/loops.js';
import {
  runSustained,
  SUSTAINED_TASK,
  type SustainedOptions,
  type SustainedResult,
} from '../lib/sustained.js';

export type GraphileMode = 'fast' | 'default';
const quiet = new Logger(() => () => {});

function runnerOptions(mode: GraphileMode, concurrency?: number): Partial<RunnerOptions> {
  if (mode === 'default' && concurrency !== undefined) return { concurrency };
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
  fn: (utils: WorkerUtils, schema: string) => Promise<T>,
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

function startRunner(
  url: string,
  schema: string,
  taskList: TaskList,
  mode: GraphileMode,
  concurrency?: number,
) {
  return run({
    connectionString: url,
    schema,
    taskList,
    noHandleSignals: true,
    logger: quiet,
    ...runnerOptions(mode, concurrency),
  });
}

/**
 * Drains `n` pre-enqueued no-op jobs; the rate runs from the runner's start. `concurrency`
 * (defaults mode only) changes that one option and leaves the rest at graphile-worker's defaults.
 */
export function graphileDrain(
  url: string,
  n: number,
  mode: GraphileMode,
  limitMs: number,
  concurrency?: number,
): Promise<DrainResult> {
  return withUtils(url, async (utils, schema) => {
    for (let i = 0; i < n; i += 5_000)
      await utils.addJobs(
        Array.from({ length: Math.min(5_000, n - i) }, () => ({ identifier: 'noop', payload: {} })),
      );
    const countdown = new Countdown(n);
    const runner = await startRunner(
      url,
      schema,
      { noop: async () => countdown.add() },
      mode,
      concurrency,
    );
    const result = await countdown.wait(limitMs);
    await runner.stop();
    return result;
  });
}

/** One `addJobs` call with `n` jobs; jobs/s. */
export function graphileBulkEnqueue(url: string, n: number): Promise<number> {
  return withUtils(url, async (utils) => {
    const specs = Array.from({ length: n }, (_, i) => ({ identifier: 'noop', payload: { i } }));
    await utils.addJob('noop', { warm: true });
    const started = performance.now();
    await utils.addJobs(specs);
    return n / ((performance.now() - started) / 1000);
  });
}

/** Single `addJob` calls from `callers` concurrent loops for `seconds` (its default pool of 10); jobs/s. */
export function graphileSingleEnqueue(
  url: string,
  seconds: number,
  callers: number,
): Promise<number> {
  return withUtils(url, (utils) =>
    timedLoops(callers, seconds, (_, i) => utils.addJob('noop', { i })),
  );
}

/** Idle worker with its defaults (LISTEN/NOTIFY, one job at a time): enqueue → handler start. */
export function graphileIdleSetup(url: string): IdleSetup {
  return (started, use) =>
    withUtils(url, async (utils, schema) => {
      const runner = await startRunner(url, schema, { probe: async () => started() }, 'default');
      try {
        return await use((i) => utils.addJob('probe', { i }));
      } finally {
        await runner.stop();
      }
    });
}

/** Its fastest configuration works while another process offers the load (sustained.ts). */
export function graphileSustained(
  url: string,
  options: SustainedOptions,
): Promise<SustainedResult> {
  return runSustained(url, options, async (picked) => {
    const schema = freshSchema('bench_gw_sustained');
    const utils = await makeWorkerUtils({ connectionString: url, schema, logger: quiet });
    await utils.migrate();
    const taskList: TaskList = {
      [SUSTAINED_TASK]: async (payload) => {
        picked((payload as { t: number }).t);
      },
    };
    const runner = await startRunner(url, schema, taskList, 'fast');
    return {
      schema,
      client: 'graphile',
      close: async () => {
        await runner.stop();
        await utils.release();
      },
    };
  });
}
