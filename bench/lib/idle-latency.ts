/**
 * Idle latency: one job at a time into a worker that has gone idle, timed from the enqueue call
 * to the first line of the handler. The same probe drives every system.
 */
import { percentiles, sleep, type Percentiles } from './stats.js';

/** Time given to the worker to settle into its idle wait before each sample. */
const IDLE_PAUSE_MS = 20;
const SAMPLE_TIMEOUT_MS = 15_000;

export class IdleLatencyProbe {
  private onStart: (() => void) | undefined;

  /** Call from the handler's first line. */
  readonly started = (): void => this.onStart?.();

  /** Runs `samples` probes; `enqueue(i)` adds one job. */
  async run(samples: number, enqueue: (i: number) => Promise<unknown>): Promise<Percentiles> {
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      await sleep(IDLE_PAUSE_MS);
      let timer: NodeJS.Timeout | undefined;
      const start = new Promise<number>((resolve, reject) => {
        this.onStart = () => resolve(performance.now());
        timer = setTimeout(
          () => reject(new Error(`job ${i} did not start within ${SAMPLE_TIMEOUT_MS} ms`)),
          SAMPLE_TIMEOUT_MS,
        );
      });
      const sentAt = performance.now();
      await enqueue(i);
      latencies.push((await start) - sentAt);
      clearTimeout(timer);
      this.onStart = undefined;
    }
    return percentiles(latencies);
  }
}
