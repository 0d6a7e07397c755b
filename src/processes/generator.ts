/**
 * The task generator (seed 000): produces demo tasks on exactly one instance at a time.
 *
 * Whether it should run is a control in the database (`generator`), so start, stop and status
 * answer the same on every instance. Which instance runs it is decided by a lease: every
 * instance's loop tries to hold `leasehold:generator`; the holder generates, the others stand
 * by, and when the holder dies its lease expires and another takes over within one ttl. A stop
 * makes the holder release at once. The holder generates only while it trusts its lease (the
 * trust deadline of its held lease), so two instances never generate in the same instant.
 */
import { LeaseHeldError } from '../core/errors.js';
import type { HeldLease } from '../core/held-lease.js';
import type { LeaseholdFacade } from '../leasehold.js';
import { GENERATOR_CONTROL, GENERATOR_RESOURCE, TASKS_QUEUE } from '../tasks/task-domain.js';
import { TypedEvents } from '../runtime/events.js';
import { BackgroundService, type ServiceOptions } from '../runtime/service.js';

// The task domain (queue name, generator control and status) lives in tasks/task-domain.ts,
// shared with the service; re-exported here for the callers that knew it as the generator's.
export {
  GENERATOR_CONTROL,
  GENERATOR_RESOURCE,
  generatorStatus,
  setGeneratorRunning,
  type GeneratorStatus,
} from '../tasks/task-domain.js';

export interface GeneratorEvents {
  'generator:leading': { instanceId: string; token: number };
  'generator:standing-by': { instanceId: string };
  'generator:generated': { instanceId: string; taskId: number };
  [name: string]: unknown;
}

export interface TaskGeneratorOptions extends Partial<ServiceOptions> {
  lh: LeaseholdFacade;
  instanceId: string;
  /** Lease ttl of the generating instance (default 5 s): the takeover bound after a crash. */
  leaseTtlMs?: number;
  /** The queue tasks go to (default `tasks`). */
  queue?: string;
  /** Builds each task's data (default: a sleep of 1 to 5 s, the seed's fake work). */
  makeTask?: () => Record<string, unknown>;
}

export interface GeneratorTick {
  readonly leading: boolean;
  readonly generated: number;
}

export class TaskGenerator extends BackgroundService<GeneratorTick> {
  readonly events = new TypedEvents<GeneratorEvents>();
  private held: HeldLease | undefined;
  private readonly lh: LeaseholdFacade;
  private readonly instanceId: string;
  private readonly leaseTtlMs: number;
  private readonly queue: string;
  private readonly makeTask: () => Record<string, unknown>;

  constructor(options: TaskGeneratorOptions) {
    super('generator', {
      intervalMs: 1_000,
      ...options,
      clock: options.clock ?? options.lh.clock,
    });
    this.lh = options.lh;
    this.instanceId = options.instanceId;
    this.leaseTtlMs = options.leaseTtlMs ?? 5_000;
    this.queue = options.queue ?? TASKS_QUEUE;
    this.makeTask =
      options.makeTask ?? (() => ({ sleep_duration_seconds: 1 + Math.floor(Math.random() * 5) }));
  }

  async runOnce(): Promise<GeneratorTick> {
    const control = await this.lh.controls.get(GENERATOR_CONTROL);
    if (control?.value.running !== true) {
      await this.standDown();
      return { leading: false, generated: 0 };
    }
    if (!this.held || this.held.state !== 'held') {
      this.held = undefined;
      try {
        this.held = await this.lh.leases.hold(GENERATOR_RESOURCE, {
          holder: this.instanceId,
          ttl: this.leaseTtlMs,
        });
        this.events.emit('generator:leading', {
          instanceId: this.instanceId,
          token: this.held.token,
        });
      } catch (error) {
        if (!(error instanceof LeaseHeldError)) throw error;
        this.events.emit('generator:standing-by', { instanceId: this.instanceId });
        return { leading: false, generated: 0 };
      }
    }
    if (!this.held.isTrusted()) return { leading: false, generated: 0 };
    // The library's defaults (maxAttempts 10), as every other enqueue: decision 0231.
    const job = await this.lh.queue(this.queue).enqueue(this.makeTask(), {
      type: 'generated',
      // Who generated it, under which lease term: lets anyone check "one instance at a time".
      headers: { 'generated-by': this.instanceId, 'generator-token': String(this.held.token) },
    });
    this.events.emit('generator:generated', { instanceId: this.instanceId, taskId: job.id });
    return { leading: true, generated: 1 };
  }

  /** True while this instance holds the generator lease and trusts it. */
  isLeading(): boolean {
    return this.held?.isTrusted() ?? false;
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.standDown();
  }

  private async standDown(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    if (held) await held.release().catch(() => false);
  }
}
