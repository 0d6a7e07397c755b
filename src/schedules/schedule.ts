/**
 * A schedule: runs a task once per slot across every instance that declares it.
 *
 * Each instance keeps one timer, set for its next slot on its own clock (the process clock only
 * schedules). When it fires, the instance attempts the newest slot that has started (see
 * slot-run.ts: run lock, then the slot claim, then the task), and sets the timer for the slot
 * after it. The database decides who runs: a slot is claimed once and never again.
 *
 * Late and missed slots:
 * - A timer that fires late (a busy event loop, a suspended machine) attempts only the newest
 *   started slot; the ones skipped in between are reported (`schedule:missed`) and not run.
 * - An instance still running the previous slot skips the next one (`busy`); in `lock` mode the
 *   run lock keeps the other instances off it too, so runs never overlap.
 * - A slot that started before this instance started is not run: a slot missed while every
 *   instance was down stays missed, unless `catchUp` is set, in which case the newest such slot
 *   is attempted at start (in `leader` mode: whenever this instance is elected) and runs if
 *   nobody ran it. Only the newest one: catching up means "run once", not "replay every slot".
 *
 * States: idle -> running -> closed. `close()` stops the timers, aborts the signal of a run in
 * progress, waits for it to settle, and closes the schedule's own election.
 */
import type { Clock, Timer } from '../core/clock.js';
import { ClosedError, InvalidArgumentError } from '../core/errors.js';
import type { FencingToken } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import type { ScheduleSlot } from '../engine/locks.js';
import { Election } from '../locks/election.js';
import { TypedEvents } from '../runtime/events.js';
import { silentLogger, type Logger } from '../runtime/logger.js';
import {
  isElectionTiming,
  resolveScheduleOptions,
  type ResolvedScheduleOptions,
  type ScheduleMode,
  type ScheduleOptions,
} from './schedule-options.js';
import { slotAfter, shortestGapMs } from './slots.js';
import {
  runSlot,
  scheduleClosedReason,
  type ScheduledFunction,
  type SlotOutcome,
  type SlotResult,
} from './slot-run.js';

/** setTimeout cannot wait longer than 2^31-1 ms; a far slot is reached by re-arming. */
const MAX_TIMER_MS = 60 * 60 * 1_000;
/** Slots are kept this long at least (and 100 gaps), then pruned by whoever runs one. */
const KEEP_SLOTS_MS = 24 * 60 * 60 * 1_000;
const PRUNE_EVERY_MS = 60 * 60 * 1_000;

export type ScheduleState = 'idle' | 'running' | 'closed';

interface ScheduleEventBase {
  readonly name: string;
  readonly instanceId: string;
}

export interface ScheduleEvents {
  /** One attempt at one slot on this instance ended; see SlotOutcome. */
  'schedule:slot': ScheduleEventBase & {
    slot: Date;
    outcome: SlotOutcome;
    token?: FencingToken;
    error?: unknown;
    durationMs?: number;
  };
  /** A late wake-up skipped the slots from `from` (inclusive) to `until` (exclusive, attempted instead). */
  'schedule:missed': ScheduleEventBase & { from: Date; until: Date };
  [name: string]: unknown;
}

export class Schedule {
  readonly name: string;
  readonly instanceId: string;
  readonly mode: ScheduleMode;
  readonly events = new TypedEvents<ScheduleEvents>();
  /** The election deciding who runs (`leader` mode), shared or the schedule's own. */
  readonly election: Election | undefined;
  private readonly config: ResolvedScheduleOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly ownsElection: boolean;
  private readonly closeController = new AbortController();
  private readonly onError: ((error: unknown) => void) | undefined;
  private status: ScheduleState = 'idle';
  private timer: Timer | undefined;
  private retryTimer: Timer | undefined;
  private nextSlot: Date | null = null;
  private running: Promise<void> | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private offElected: (() => void) | undefined;
  private lastPruneAt: number | undefined;

  constructor(
    private readonly engine: Engine,
    name: string,
    options: ScheduleOptions,
    private readonly fn: ScheduledFunction,
  ) {
    if (typeof fn !== 'function') throw new InvalidArgumentError('fn', 'must be a function');
    this.clock = engine.clock;
    this.config = resolveScheduleOptions(name, options, this.clock);
    this.name = this.config.name;
    this.instanceId = this.config.instanceId;
    this.mode = this.config.mode;
    this.logger = options.logger ?? silentLogger;
    this.onError = options.onError;
    const given = this.config.election;
    if (this.mode !== 'leader') {
      this.election = undefined;
      this.ownsElection = false;
    } else if (given !== undefined && !isElectionTiming(given)) {
      this.election = given;
      this.ownsElection = false;
    } else {
      this.election = new Election(engine, `schedule:${this.name}`, {
        ...given,
        instanceId: this.instanceId,
        logger: this.logger,
        onError: (error) => this.report(error),
      });
      this.ownsElection = true;
    }
  }

  get state(): ScheduleState {
    return this.status;
  }

  /** Starts waking for slots (and joins the election in `leader` mode). Idempotent. */
  start(): Promise<void> {
    if (this.status === 'closed') return Promise.reject(new ClosedError(`schedule "${this.name}"`));
    this.starting ??= this.begin();
    return this.starting;
  }

  /** Stops: no new attempt starts; a run in progress gets its signal aborted and is awaited. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** The newest slots claimed (run) by any instance, newest first. */
  recent(limit = 20): Promise<ScheduleSlot[]> {
    return this.engine.scheduleSlotList({ name: this.name, limit });
  }

  /** Attempts one slot now, as the timer would. Public so tests and tools can drive it. */
  async runOnce(slot: Date): Promise<SlotResult> {
    if (this.status === 'closed') return { slot, outcome: 'abandoned' };
    if (this.running) {
      const busy: SlotResult = { slot, outcome: 'busy' };
      this.emitSlot(busy);
      return busy;
    }
    let done!: () => void;
    this.running = new Promise<void>((resolve) => (done = resolve));
    try {
      const result = await this.attempt(slot);
      this.emitSlot(result);
      return result;
    } finally {
      this.running = undefined;
      done();
    }
  }

  private async begin(): Promise<void> {
    const startedAt = this.clock.now();
    this.status = 'running';
    if (this.election && this.ownsElection) await this.election.start();
    if (this.status !== 'running') return;
    if (this.config.catchUp) {
      // In leader mode only the leader catches up: now if it leads, later whenever it is elected.
      if (!this.election || this.election.isLeader()) this.catchUp(startedAt);
      this.offElected = this.election?.events.on('election:elected', () => this.catchUp());
    }
    // From the start instant, not from now: a slot that began while the election was starting
    // is due at once.
    this.arm(this.config.series.firstAtOrAfter(startedAt));
  }

  /** Attempts the newest slot that started before `before` (default now), if any. */
  private catchUp(before: Date = this.clock.now()): void {
    if (this.status !== 'running') return;
    const slot = this.config.series.latestAtOrBefore(new Date(before.getTime() - 1));
    if (slot) void this.runOnce(slot);
  }

  private arm(slot: Date | null): void {
    this.nextSlot = slot;
    this.timer?.cancel();
    if (!slot || this.status !== 'running') return;
    const delay = Math.min(MAX_TIMER_MS, slot.getTime() - this.clock.now().getTime());
    this.timer = this.clock.setTimer(delay, () => this.onTimer());
  }

  private onTimer(): void {
    const expected = this.nextSlot;
    if (this.status !== 'running' || !expected) return;
    const now = this.clock.now();
    if (now.getTime() < expected.getTime()) {
      this.arm(expected); // woken early: a long wait is re-armed in steps, or the wall clock stepped back
      return;
    }
    const due = this.config.series.latestAtOrBefore(now) ?? expected;
    if (due.getTime() > expected.getTime())
      this.events.emit('schedule:missed', { ...this.ids(), from: expected, until: due });
    void this.runOnce(due);
    this.arm(slotAfter(this.config.series, due));
  }

  private async attempt(slot: Date): Promise<SlotResult> {
    let result: SlotResult;
    try {
      result = await runSlot(
        {
          engine: this.engine,
          clock: this.clock,
          config: this.config,
          fn: this.fn,
          closeSignal: this.closeController.signal,
          election: this.election,
          report: (error) => this.report(error),
        },
        slot,
      );
    } catch (error) {
      this.report(error);
      return { slot, outcome: 'error', error };
    }
    if (result.outcome === 'failed') this.report(result.error);
    if (result.outcome === 'early') this.retryEarly(slot, result.retryInMs ?? 0);
    if (result.outcome === 'ran' || result.outcome === 'failed') await this.prune(slot);
    return result;
  }

  /** The database clock is behind ours: try the slot again once it has started there. */
  private retryEarly(slot: Date, retryInMs: number): void {
    // Only while it is still the newest slot: a later one supersedes it.
    if (this.status !== 'running' || (this.nextSlot && this.nextSlot <= slot)) return;
    this.retryTimer?.cancel();
    this.retryTimer = this.clock.setTimer(Math.max(1, retryInMs), () => {
      if (this.nextSlot && this.nextSlot.getTime() > slot.getTime()) void this.runOnce(slot);
    });
  }

  /** Forgets old slots, at most once an hour per instance; slots stay at least a day. */
  private async prune(slot: Date): Promise<void> {
    const now = this.clock.monotonic();
    if (this.lastPruneAt !== undefined && now - this.lastPruneAt < PRUNE_EVERY_MS) return;
    this.lastPruneAt = now;
    const gap = shortestGapMs(this.config.series, slot) ?? 0;
    const keep = Math.max(KEEP_SLOTS_MS, 100 * gap);
    try {
      await this.engine.scheduleSlotPrune({
        name: this.name,
        before: new Date(slot.getTime() - keep),
      });
    } catch (error) {
      this.report(error);
    }
  }

  private async shutdown(): Promise<void> {
    this.status = 'closed';
    this.timer?.cancel();
    this.retryTimer?.cancel();
    this.offElected?.();
    this.closeController.abort(scheduleClosedReason(this.name));
    await this.starting?.catch(() => {});
    await this.running;
    if (this.ownsElection) await this.election?.close();
  }

  private emitSlot(result: SlotResult): void {
    this.events.emit('schedule:slot', { ...this.ids(), ...result });
  }

  private report(error: unknown): void {
    if (this.onError) {
      try {
        this.onError(error);
      } catch {
        // a throwing error handler must not stop the schedule
      }
      return;
    }
    this.logger.warn(
      { schedule: this.name, err: error },
      `schedule "${this.name}": ${String(error)}`,
    );
  }

  private ids(): ScheduleEventBase {
    return { name: this.name, instanceId: this.instanceId };
  }
}
