// The HTTP task worker's idle polling is jittered (±25% of the interval), so idle workers do not
// poll in lock-step with a periodic producer. The service here is a stand-in that never has a
// task: only the times of the worker's asks are under test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskClient } from '../../src/client/task-client.js';
import { ManualClock } from '../../src/core/clock.js';
import { HttpTaskWorker } from '../../src/processes/task-worker.js';

describe('HttpTaskWorker polling', () => {
  it('waits the poll interval spread by ±25% between asks when no task is ready', async () => {
    const clock = new ManualClock();
    const askedAt: number[] = [];
    const noTasks = {
      next: () => {
        askedAt.push(clock.monotonic());
        return Promise.resolve(null);
      },
    } as unknown as TaskClient;
    const draws = [0, 0.5, 0.999, 0.25];
    let drawn = 0;
    const worker = new HttpTaskWorker({
      client: noTasks,
      workerId: 'p',
      pollIntervalMs: 400,
      presence: false,
      clock,
      random: () => draws[drawn++ % draws.length] ?? 0,
    });
    worker.start();
    await clock.advance(0);
    for (let i = 0; i < 4; i++) await clock.advance(500);
    await worker.stop();
    const gaps = askedAt.slice(1).map((t, i) => t - (askedAt[i] ?? 0));
    assert.deepEqual(gaps.slice(0, 4), [300, 400, 500, 350]);
  });
});
