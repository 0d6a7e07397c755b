/**
 * What every worker process of a run does besides its handler: run a maintainer (as every
 * instance should: it rescues the jobs of a frozen or killed process), and start its workers,
 * trying again while the database is unreachable (a child may start in a fault).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Leasehold } from '../../../../src/leasehold.js';
import type { Worker } from '../../../../src/queue/worker.js';

export async function startWorkerProcess(lh: Leasehold, workers: readonly Worker[]): Promise<void> {
  lh.maintainer({
    interval: 300,
    workerSilence: 5_000,
    rescueBackoff: { baseMs: 50, capMs: 200 },
  }).start();
  await Promise.all(
    workers.map(async (worker) => {
      for (;;) {
        try {
          await worker.start();
          return;
        } catch {
          await sleep(200);
        }
      }
    }),
  );
}
