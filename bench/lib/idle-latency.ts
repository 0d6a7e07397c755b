/**
 * Idle latency: one job at a time into a worker that has gone idle, timed from the enqueue call
 * to the first line of the handler. The same probe drives every system.
 *
 * The systems are sampled interleaved (decision 0214): all of them idle at once, sample i taken
 * from each in turn, the order rotating with i. A p99 is a few samples, and this machine's slow
 * moments (a slow fsync, a neighbour's burst) come in stretches of seconds; measured one system
 * after another, a stretch lands in one system's block and decides its p99 alone. Interleaved,
 * every system meets the same stretches.
 */
import { percentiles, sleep, type Percentiles } from './stats.js';

/** Time given to the workers to settle into their idle wait before each sample. */
const IDLE_PAUSE_MS = 20;
const SAMPLE_TIMEOUT_MS = 15_000;

/** Adds job `i` to the system under test. */
export type IdleEnqueue = (i: number) => Promise<unknown>;

/**
 * Sets a system up with an idle worker whose handler calls `started` on its first line, runs
 * `use` with the system's enqueue, and tears everything down after it.
 */
export type IdleSetup = <T>(
  started: () => void,
  use: (enqueue: IdleEnqueue) => Promise<T>,
) => Promise<T>;

/** Percentiles for each setup, in the order given. */
export async function interleavedIdleLatency(
  setups: readonly IdleSetup[],
  samples: number,
): Promise<Percentiles[]> {
  let waiting: { system: number; resolve: (at: number) => void } | undefined;
  const starter = (system: number) => (): void => {
    const at = performance.now();
    // Only the job being timed resolves; a worker never starts one it was not given.
    if (waiting?.system === system) waiting.resolve(at);
  };
  const latencies = setups.map((): number[] => []);

  const sampleOne = async (system: number, i: number, enqueue: IdleEnqueue): Promise<void> => {
    await sleep(IDLE_PAUSE_MS);
    let timer: NodeJS.Timeout | undefined;
    const start = new Promise<number>((resolve, reject) => {
      waiting = { system, resolve };
      timer = setTimeout(
        () => reject(new Error(`job ${i} did not start within ${SAMPLE_TIMEOUT_MS} ms`)),
        SAMPLE_TIMEOUT_MS,
      );
    });
    try {
      const sentAt = performance.now();
      await enqueue(i);
      latencies[system]!.push((await start) - sentAt);
    } finally {
      clearTimeout(timer);
      waiting = undefined;
    }
  };

  const sampleAll = async (enqueues: readonly IdleEnqueue[]): Promise<void> => {
    for (let i = 0; i < samples; i++)
      for (let k = 0; k < enqueues.length; k++) {
        const system = (k + i) % enqueues.length;
        await sampleOne(system, i, enqueues[system]!);
      }
  };

  // Each setup wraps the next, so all workers idle together and are torn down in reverse.
  const nest = (index: number, enqueues: IdleEnqueue[]): Promise<void> =>
    index === setups.length
      ? sampleAll(enqueues)
      : setups[index]!(starter(index), (enqueue) => nest(index + 1, [...enqueues, enqueue]));
  await nest(0, []);
  return latencies.map((values) => percentiles(values));
}

/** One system alone. */
export async function idleLatency(setup: IdleSetup, samples: number): Promise<Percentiles> {
  return (await interleavedIdleLatency([setup], samples))[0]!;
}
