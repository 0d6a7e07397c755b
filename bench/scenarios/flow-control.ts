/**
 * Flow control (issue 26, decision 0239): what a queue's limits cost the queue, each ratio
 * leasehold with a limit ÷ leasehold without it, in the same run and the same worker shape.
 *
 * - Burn-downs of N no-op jobs with one worker process running two workers of concurrency 50 /
 *   claim batch 50 (100 in all), jobs kept on completion. Capped: the queue configured with
 *   `concurrency: 100`, the workers' total, so the cap never holds a worker back and the ratio
 *   is its cost (slot assignment, the slot race between the two workers, the wake-up when a
 *   slot frees) against the same queue without settings (the plain claim statement).
 * - Keyed burn-downs: the same jobs, each with one of 100 partition keys (a fixed pseudo-random
 *   sequence, the same on both sides), with `perKeyConcurrency: 4` against
 *   `perKeyConcurrency: null` (settings present, no cap per key). 100 keys × 4 is more than the
 *   workers' 100 slots, so again the ratio is what enforcing the cap costs.
 * - Resume: an idle worker (its defaults, concurrency 1, LISTEN on) on a paused queue holding one
 *   job; ms from the `resume()` call to the handler's first line, over several cycles a round.
 *
 * Every side runs once a round, round-robin, each on a fresh schema, like the burn-down family.
 */
import { Leasehold } from '../../src/leasehold.js';
import type { QueueConfiguration } from '../../src/queue/queue-settings.js';
import { Countdown, type DrainResult } from '../lib/countdown.js';
import { dropSchema, freshSchema } from '../lib/database.js';
import { roundRobin, type BenchSystem, type Family, type FamilyContext } from '../lib/family.js';
import { formatValue } from '../lib/format.js';
import { percentiles, sleep } from '../lib/stats.js';

const QUEUE = 'bench';
const WORKERS = 2;
const WORKER_CONCURRENCY = 50;
const WORKER_BATCH = 50;
const TOTAL = WORKERS * WORKER_CONCURRENCY;
const KEYS = 100;
const PER_KEY = 4;
/** The pool of the burn-down's tuned shapes (queue.ts). */
const POOL = 12;

const SHAPE = `${WORKERS} workers × concurrency ${WORKER_CONCURRENCY} / claim batch ${WORKER_BATCH} in one process, jobs kept`;

/** Time given to the worker to hear the enqueue, find the queue paused, and go idle. */
const PAUSED_IDLE_MS = 100;
/** A liveness bound, not a target: a job that never starts fails the run. */
const START_TIMEOUT_MS = 15_000;

const ID = {
  capped: 'flowControl.burnDown.capped',
  unlimited: 'flowControl.burnDown.unlimited',
  perKey4: 'flowControl.burnDown.perKey4',
  perKeyNull: 'flowControl.burnDown.perKeyNull',
  resumeP50: 'flowControl.resume.p50',
  resumeP99: 'flowControl.resume.p99',
} as const;

/** A fixed pseudo-random key per job (mulberry32 with a fixed seed): the same on both sides. */
function keySequence(n: number): string[] {
  let state = 0x2f6b_1d3c;
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return Array.from({ length: n }, () => `k${Math.floor(next() * KEYS)}`);
}

async function withSchema<T>(url: string, fn: (lh: Leasehold) => Promise<T>): Promise<T> {
  const schema = freshSchema('bench_lh_flow');
  const lh = await Leasehold.connect({
    connectionString: url,
    schema,
    migrate: true,
    poolSize: POOL,
  });
  try {
    return await fn(lh);
  } finally {
    await lh.close();
    await dropSchema(url, schema);
  }
}

/**
 * Drains `n` no-op jobs (keyed when `keyed`) through the shape above, the queue configured with
 * `settings` first (none: no settings row, the plain claim). Timed from the workers' start to
 * the last completion written, as in the burn-down family.
 */
function drain(
  url: string,
  n: number,
  limitMs: number,
  keyed: boolean,
  settings: QueueConfiguration | undefined,
): Promise<DrainResult> {
  return withSchema(url, async (lh) => {
    const queue = lh.queue(QUEUE);
    if (settings) await queue.configure(settings);
    const keys = keyed ? keySequence(n) : undefined;
    for (let i = 0; i < n; i += 5_000)
      await queue.enqueueMany(
        Array.from({ length: Math.min(5_000, n - i) }, (_, k) => ({
          payload: {},
          ...(keys ? { options: { partitionKey: keys[i + k]! } } : {}),
        })),
      );
    const countdown = new Countdown(n);
    const workers = Array.from({ length: WORKERS }, () =>
      lh.worker({
        queues: QUEUE,
        concurrency: WORKER_CONCURRENCY,
        maxClaimBatch: WORKER_BATCH,
        handler: async () => undefined,
      }),
    );
    for (const worker of workers) worker.events.on('job:completed', () => countdown.add());
    await Promise.all(workers.map((w) => w.start()));
    const result = await countdown.wait(limitMs);
    await Promise.all(workers.map((w) => w.stop()));
    return result;
  });
}

/** ms from each `resume()` call to the handler's first line, one job per cycle. */
function resumeLatencies(url: string, cycles: number): Promise<number[]> {
  return withSchema(url, async (lh) => {
    let onStart: ((at: number) => void) | undefined;
    const worker = lh.worker({
      queues: 'resume',
      concurrency: 1,
      handler: async () => {
        const at = performance.now();
        onStart?.(at);
      },
    });
    await worker.start();
    const queue = lh.queue('resume');
    const latencies: number[] = [];
    try {
      for (let i = 0; i < cycles; i++) {
        await queue.pause();
        let timer: NodeJS.Timeout | undefined;
        const start = new Promise<number>((resolve, reject) => {
          onStart = resolve;
          timer = setTimeout(
            () => reject(new Error(`cycle ${i}: no job started in ${START_TIMEOUT_MS} ms`)),
            START_TIMEOUT_MS,
          );
        });
        try {
          await queue.enqueue({ i });
          await sleep(PAUSED_IDLE_MS);
          const resumedAt = performance.now();
          await queue.resume();
          latencies.push((await start) - resumedAt);
        } finally {
          clearTimeout(timer);
          onStart = undefined;
        }
      }
    } finally {
      await worker.stop();
    }
    return latencies;
  });
}

function burnDown(
  ctx: FamilyContext,
  id: string,
  label: string,
  keyed: boolean,
  settings: QueueConfiguration | undefined,
): BenchSystem {
  ctx.results.define({ id, family: 'flow-control', label, unit: 'jobs/s', better: 'higher' });
  const n = ctx.counts.burnDownJobs;
  const limitMs = ctx.counts.burnDownLimitSeconds * 1000;
  return {
    name: label,
    run: async () => {
      const r = await drain(ctx.db.url, n, limitMs, keyed, settings);
      const capped = `capped: ${r.completed} of ${n} in ${ctx.counts.burnDownLimitSeconds} s`;
      ctx.results.add(id, r.rate, r.capped ? capped : undefined);
      return `${formatValue(r.rate, 'jobs/s')} jobs/s${r.capped ? ` (${capped})` : ''}`;
    },
  };
}

export const flowControlFamily: Family = {
  name: 'flow-control',
  title: 'Flow control',
  about: ({ counts: c }) =>
    `Burn-downs of ${c.burnDownJobs.toLocaleString('en-US')} pre-enqueued no-op jobs with ` +
    `${SHAPE}, each queue with and without a limit (the limit set to what the workers could ` +
    `run anyway, so the ratio is what enforcing it costs); a run stops after ` +
    `${c.burnDownLimitSeconds} s. Keyed jobs carry one of ${KEYS} partition keys. Resume: an ` +
    `idle worker (concurrency 1, LISTEN/NOTIFY, polling every 2 s) on a paused queue holding ` +
    `one job, ms from the resume() call to the handler's first line, ${c.resumeCycles} ` +
    `pause/resume cycles a round; p50 and p99 are of each round's cycles.`,
  async run(ctx) {
    const { results } = ctx;
    const systems: BenchSystem[] = [
      burnDown(ctx, ID.capped, `capped: queue concurrency ${TOTAL} (the workers' total)`, false, {
        concurrency: TOTAL,
      }),
      burnDown(ctx, ID.unlimited, 'unlimited: the queue without settings', false, undefined),
      burnDown(ctx, ID.perKey4, `keyed over ${KEYS} keys, perKeyConcurrency ${PER_KEY}`, true, {
        perKeyConcurrency: PER_KEY,
      }),
      burnDown(
        ctx,
        ID.perKeyNull,
        `keyed over ${KEYS} keys, perKeyConcurrency null (no cap per key)`,
        true,
        { perKeyConcurrency: null },
      ),
    ];
    for (const [id, level] of [
      [ID.resumeP50, 'p50'],
      [ID.resumeP99, 'p99'],
    ] as const)
      results.define({
        id,
        family: 'flow-control',
        label: `resume() to first job start, ${level} (LISTEN/NOTIFY)`,
        unit: 'ms',
        better: 'lower',
      });
    systems.push({
      name: 'resume',
      run: async () => {
        const p = percentiles(await resumeLatencies(ctx.db.url, ctx.counts.resumeCycles));
        results.add(ID.resumeP50, p.p50);
        results.add(ID.resumeP99, p.p99);
        return `resume → start p50 ${formatValue(p.p50, 'ms')} ms, p99 ${formatValue(p.p99, 'ms')} ms`;
      },
    });
    results.ratio({
      key: 'burnDownCappedVsUnlimited',
      label: `flow control, ${SHAPE}: queue concurrency ${TOTAL} (the workers' total) ÷ the same queue without settings`,
      numerator: ID.capped,
      denominator: ID.unlimited,
      target: { op: '>=', value: 0.8 },
    });
    results.ratio({
      key: 'burnDownPerKey4VsUnlimited',
      label: `flow control, ${SHAPE}, jobs over ${KEYS} keys: perKeyConcurrency ${PER_KEY} ÷ perKeyConcurrency null (no cap per key)`,
      numerator: ID.perKey4,
      denominator: ID.perKeyNull,
      target: { op: '>=', value: 0.6 },
    });
    results.check({
      key: 'resumeFirstStartP50',
      label: 'flow control: resume() to the first job start, p50 of each round (LISTEN/NOTIFY)',
      measurement: ID.resumeP50,
      target: { op: '<=', value: 50 },
    });
    await roundRobin(ctx, 'flow-control', systems);
    results.figures['flowControl'] = {
      shape: SHAPE,
      keys: KEYS,
      perKeyConcurrency: PER_KEY,
      resumeCycles: ctx.counts.resumeCycles,
      resumeMs: {
        p50: results.summary(ID.resumeP50) ?? null,
        p99: results.summary(ID.resumeP99) ?? null,
      },
    };
  },
};
