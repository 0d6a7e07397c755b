/**
 * One attempt at one slot, on one instance. The order of the steps is what makes a slot run at
 * most once and never overlap the run before it:
 *
 * 1. `leader` mode: give up unless this instance leads (its trust deadline, not a flag).
 * 2. Take the run lock (`leasehold:schedule:<name>`, ttl `lockAtMost`). Held by another run
 *    (still going, or inside its `lockAtLeast`): skip. This is what prevents overlap.
 * 3. Claim the slot row, recording the slot after it. Already claimed: someone ran it; release
 *    the lock at once and skip. A claim is permanent and unique per (schedule, slot), so no clock
 *    skew or task length can make a slot run twice. A claim refused because the slot has not
 *    started on the database clock (this process's clock runs ahead) answers `early`, and the
 *    caller tries again then.
 * 4. Run the task with the token (the leader's in `leader` mode, the run lock's otherwise) and a
 *    signal that fires at the run lock's trust deadline (`sentAt + lockAtMost - margin`), when
 *    the leadership ends, or when the schedule closes.
 * 5. Release the run lock, keeping it until `acquiredAt + lockAtLeast`; in `auto` mode leave it
 *    to expire by itself at `lockAtMost`.
 *
 * The lock comes before the claim so that a slot is recorded only when it really runs: claimed
 * first, a slot found locked by a long previous run would be recorded and never run.
 */
import type { Clock } from '../core/clock.js';
import { AbortedError, LeaseLostError } from '../core/errors.js';
import { defaultMargin } from '../core/trust.js';
import type { FencingToken } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import type { Election } from '../locks/election.js';
import type { ResolvedScheduleOptions, ScheduleMode } from './schedule-options.js';
import { slotAfter } from './slots.js';

/**
 * What an attempt at a slot came to on this instance:
 * - `ran` / `failed`: this instance ran the task (it returned / it threw);
 * - `claimed`: another instance had already run the slot;
 * - `locked`: the run lock was held (a previous run still going, or its lockAtLeast);
 * - `not-leader`: `leader` mode and this instance does not lead;
 * - `busy`: this instance was still running the previous slot;
 * - `abandoned`: claimed, but the run's signal fired before it could start (leadership lost or
 *   the schedule closed during the claim); the slot stays claimed and is not run;
 * - `early`: the slot has not started on the database clock yet (tried again at that time);
 * - `error`: the database could not be reached; the slot is not retried.
 */
export type SlotOutcome =
  'ran' | 'failed' | 'claimed' | 'locked' | 'not-leader' | 'busy' | 'abandoned' | 'early' | 'error';

export interface SlotResult {
  readonly slot: Date;
  readonly outcome: SlotOutcome;
  /** The token the run was given and recorded with the slot (ran, failed, abandoned). */
  readonly token?: FencingToken;
  /** What the task threw (failed) or the database error (error). */
  readonly error?: unknown;
  /** How long the task ran, on the monotonic clock. */
  readonly durationMs?: number;
  /** `early`: how long until the slot starts on the database clock. */
  readonly retryInMs?: number;
}

/** What a scheduled task receives. */
export interface ScheduledRun {
  readonly name: string;
  /** The slot's start instant: its identity. */
  readonly slot: Date;
  /** The leader's token in `leader` mode, the run lock's otherwise; recorded with the slot. */
  readonly token: FencingToken;
  /** Fires at the run lock's trust deadline, when the leadership ends, or when the schedule closes. */
  readonly signal: AbortSignal;
  readonly instanceId: string;
  readonly mode: ScheduleMode;
}

export type ScheduledFunction = (run: ScheduledRun) => Promise<unknown> | unknown;

export interface SlotRunContext {
  readonly engine: Engine;
  readonly clock: Clock;
  readonly config: ResolvedScheduleOptions;
  readonly fn: ScheduledFunction;
  /** Aborts when the schedule closes. */
  readonly closeSignal: AbortSignal;
  /** `leader` mode: the election that decides who runs. */
  readonly election: Election | undefined;
  /** Reports a failed release; the attempt's outcome stands. */
  readonly report: (error: unknown) => void;
}

export async function runSlot(ctx: SlotRunContext, slot: Date): Promise<SlotResult> {
  const { engine, clock, config } = ctx;
  if (config.mode === 'leader' && !ctx.election?.isLeader()) return { slot, outcome: 'not-leader' };

  const sentAt = clock.monotonic();
  const lock = await engine.leaseLockAcquire({
    name: config.lockName,
    holder: config.instanceId,
    ttlMs: config.lockAtMostMs,
  });
  if (!lock.acquired) return { slot, outcome: 'locked' };
  const term = lock.lease;
  let keepLock = false;
  try {
    let leaderToken: FencingToken | null = null;
    const signals = [ctx.closeSignal];
    if (config.mode === 'leader') {
      // Leadership may have ended while the lock was being taken.
      leaderToken = ctx.election?.token ?? null;
      if (leaderToken === null) return { slot, outcome: 'not-leader' };
      signals.push(ctx.election!.signal);
    }
    const token = leaderToken ?? term.token;
    const claim = await engine.scheduleSlotClaim({
      name: config.name,
      slot,
      holder: config.instanceId,
      token,
      // Recorded for readers that do not know the series, such as the dashboard (decision 0301).
      nextSlot: slotAfter(config.series, slot),
    });
    if (!claim) {
      const now = await engine.now();
      if (now.getTime() < slot.getTime())
        return { slot, outcome: 'early', retryInMs: slot.getTime() - now.getTime() };
      return { slot, outcome: 'claimed' };
    }
    keepLock = true;

    const deadline = new AbortController();
    const trustedUntil = sentAt + config.lockAtMostMs - defaultMargin(config.lockAtMostMs);
    const timer = clock.setTimer(trustedUntil - clock.monotonic(), () =>
      deadline.abort(
        new LeaseLostError(
          config.lockName,
          'the run reached the trust deadline of its lock (lockAtMost - margin)',
        ),
      ),
    );
    const signal = AbortSignal.any([...signals, deadline.signal]);
    if (signal.aborted) {
      timer.cancel();
      return { slot, outcome: 'abandoned', token };
    }
    const started = clock.monotonic();
    try {
      await ctx.fn({
        name: config.name,
        slot,
        token,
        signal,
        instanceId: config.instanceId,
        mode: config.mode,
      });
      return { slot, outcome: 'ran', token, durationMs: clock.monotonic() - started };
    } catch (error) {
      return { slot, outcome: 'failed', token, error, durationMs: clock.monotonic() - started };
    } finally {
      timer.cancel();
    }
  } finally {
    // Not run: release at once. Run: keep until lockAtLeast; auto: leave it to expire by itself.
    if (!keepLock || config.mode !== 'auto') {
      await engine
        .leaseLockRelease({
          name: term.resource,
          holder: term.holder,
          token: term.token,
          atLeastMs: keepLock ? config.lockAtLeastMs : 0,
        })
        .catch((error: unknown) => ctx.report(error));
    }
  }
}

/** The reason a run's signal carries when its schedule closes. */
export function scheduleClosedReason(name: string): AbortedError {
  return new AbortedError(`schedule "${name}" was closed`);
}
