/**
 * The worker's row in the workers table: registered on start, refreshed on an interval with
 * the number of jobs in flight, and ended `stopped`. A worker whose row goes silent is marked
 * dead by maintenance, which is what the dashboard shows when a process is SIGKILLed.
 */
import type { WorkerStatus } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import type { WorkerRegisterParams } from '../engine/workers.js';
import { BackgroundService, type ServiceOptions } from '../runtime/service.js';

export class WorkerPresence extends BackgroundService<void> {
  private reported: WorkerStatus = 'alive';

  constructor(
    private readonly engine: Engine,
    private readonly row: WorkerRegisterParams,
    private readonly countInFlight: () => number,
    options: ServiceOptions,
  ) {
    super('worker-presence', { firstRunDelayMs: options.intervalMs, ...options });
  }

  register(): Promise<unknown> {
    return this.engine.workerRegister(this.row);
  }

  /** Records a new status at once (draining, stopped); later heartbeats keep it. */
  async setStatus(status: WorkerStatus): Promise<void> {
    this.reported = status;
    await this.runOnce();
  }

  async runOnce(): Promise<void> {
    await this.engine.workerHeartbeat({
      id: this.row.id,
      inFlight: this.countInFlight(),
      status: this.reported,
    });
  }
}
