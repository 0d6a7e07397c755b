/**
 * An HTTP task worker's row in the service's workers list (decision 0264): registered when it
 * starts, refreshed every few seconds with the tasks in hand, `draining` when it stops claiming
 * and `stopped` at the end, as the library's workers do for themselves. Only a display and an
 * operator's aid, never part of the claim protocol: a service that does not answer (or an older
 * one without the route) costs the worker nothing, and a row the service no longer knows (pruned
 * after a long silence) is written again by the next heartbeat.
 */
import { hostname } from 'node:os';
import type { Clock } from '../core/clock.js';
import type { TaskClient, WorkerRegistration } from '../client/task-client.js';
import type { Logger } from '../runtime/logger.js';
import { BackgroundService } from '../runtime/service.js';

export interface HttpWorkerPresenceOptions {
  client: TaskClient;
  workerId: string;
  /** What the row says (defaults: the worker id, this host and pid, queue `tasks`, 1). */
  registration?: Partial<WorkerRegistration>;
  /** How often the row is refreshed (default 5 s, the library workers' heartbeat). */
  intervalMs?: number;
  clock: Clock;
  /** Tasks in hand now. */
  inFlight: () => number;
  logger?: Logger;
}

export class HttpWorkerPresence extends BackgroundService<void> {
  private registered = false;
  private reported: 'alive' | 'draining' | 'stopped' = 'alive';
  private readonly registration: WorkerRegistration;

  constructor(private readonly o: HttpWorkerPresenceOptions) {
    super('http-worker-presence', {
      intervalMs: o.intervalMs ?? 5_000,
      clock: o.clock,
      ...(o.logger ? { logger: o.logger } : {}),
    });
    this.registration = {
      name: o.workerId,
      host: hostname(),
      pid: process.pid,
      queues: ['tasks'],
      concurrency: 1,
      ...o.registration,
    };
  }

  async runOnce(): Promise<void> {
    if (this.registered) {
      const row = await this.o.client.workerHeartbeat(this.o.workerId, {
        inFlight: this.o.inFlight(),
        status: this.reported,
      });
      if (row) return;
    }
    await this.o.client.registerWorker(this.o.workerId, this.registration);
    this.registered = true;
    if (this.reported !== 'alive' || this.o.inFlight() > 0)
      await this.o.client.workerHeartbeat(this.o.workerId, {
        inFlight: this.o.inFlight(),
        status: this.reported,
      });
  }

  /**
   * A refresh that did not reach the service is tried again at the next interval. Debug only:
   * the claim loop already warns when the service is unreachable, and the row is a display.
   */
  protected override onError(error: unknown): void {
    this.logger.debug({ error: String(error) }, 'could not refresh the worker row; next time');
  }

  /** Says the new status at once (best effort: the worker's shutdown never waits on it long). */
  async setStatus(status: 'draining' | 'stopped'): Promise<void> {
    this.reported = status;
    await this.runOnce().catch((error: unknown) =>
      // Debug only: at shutdown the service may already be gone, and that is no error.
      this.logger.debug({ error: String(error), status }, 'could not report the worker status'),
    );
  }
}
