/**
 * The worker's claiming loop. It claims batches sized to the free slots, plus the room the
 * executor has to hold jobs ahead of a slot while handlers are shorter than claims (decision
 * 0277; none for a limited queue), and wakes up:
 * - at once after a full batch (more is probably waiting) and when slots free up after one,
 *   as soon as half a batch's worth is free;
 * - on a notification for one of its queues (an enqueue or a retry became claimable), at most
 *   once per `cooldownMs`, so a burst of notifications costs one claim, not one each;
 * - otherwise every `pollIntervalMs` (± jitter): notifications are hints, polling is the
 *   guarantee (a dropped NOTIFY, a listener reconnecting, a job whose delay just ran out).
 *
 * With a backlog, a second claim may go out while the first is still in the database (at most
 * two): the worker then runs one batch while the next is being claimed, instead of idling for
 * a round trip per batch. The second claim only takes slots the first has not reserved, so the
 * worker never holds more than its slots and its room ahead; an idle worker never has two
 * claims out.
 *
 * A claim reads the claim index from its head, where the entries of jobs claimed or deleted
 * since the table's last vacuum pile up: under a heavy sustained load each claim walked
 * thousands of them (decision 0274). So a claim sent within FULL_LOOK_MS of a full look is
 * bounded: it passes over jobs that became available before the oldest job that full look took
 * (less BOUND_MARGIN_MS; the present moment when it took none), and the next full look, at most
 * FULL_LOOK_MS later, takes whatever that passed over (a partition's next job whose head just
 * finished, a flow's released step, a rescued or handed-back job, an enqueue committed late).
 */
import { backoffDelay, jitter } from '../core/backoff.js';
import type { Clock, Timer } from '../core/clock.js';
import type { Job } from '../core/types.js';
import type { Engine } from '../engine/engine.js';
import { JOBS_TOPIC, type ClaimedJobs } from '../engine/jobs.js';
import type { Subscription } from '../engine/notifications.js';

export interface ProducerOptions {
  engine: Engine;
  clock: Clock;
  workerId: string;
  queues: readonly string[];
  /** Claim only jobs of these types; undefined: any. */
  types?: readonly string[] | undefined;
  leaseTtlMs: number;
  pollIntervalMs: number;
  /** Fewest ms between two claims caused by notifications. */
  cooldownMs: number;
  /** Most jobs per claim statement. */
  maxBatch: number;
  /** The worker's slots (its concurrency). */
  slots: number;
  /** Listen for notifications (default true when the engine has them). */
  notifications: boolean;
  freeSlots: () => number;
  /**
   * Jobs that may be claimed beyond the free slots now, to wait for one (decision 0277);
   * negative when more are held so than is allowed now. Not used for a limited queue, whose
   * room the jobs held would take from other workers.
   */
  aheadRoom?: () => number;
  /** Called with each answered claim's round trip, ms. */
  claimTook?: (ms: number) => void;
  /**
   * Jobs whose handlers are done and whose outcomes are not yet written: free slots to the
   * worker, still processing to the database.
   */
  unwritten: () => number;
  /** Called with each claimed job and the monotonic time its claim was sent. */
  dispatch: (job: Job, claimSentAt: number) => void;
  /** Called after each answered claim, its jobs dispatched: how many it took of how many asked. */
  answered?: (taken: number, asked: number) => void;
  onError: (error: unknown) => void;
}

/** Claims out at once: two keep the database and the worker busy; more only add contention. */
const CLAIMS_IN_FLIGHT = 2;

/** A claim sent this long after the last full look is a full look again (decision 0274). */
export const FULL_LOOK_MS = 250;
/**
 * How far below its full look's oldest job a bounded claim still reads: room for an enqueue
 * whose transaction began before that look and committed after it (its jobs carry the
 * transaction's start time).
 */
export const BOUND_MARGIN_MS = 1_000;

export class Producer {
  private running = false;
  private loopDone: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private waitTimer: Timer | undefined;
  /** Something may be claimable now: a notification arrived, or the last claim came back full. */
  private workLikely = true;
  /** The last claim to come back was full: a backlog, worth a second claim in flight. */
  private backlog = false;
  private lastClaimAt = Number.NEGATIVE_INFINITY;
  /** When polling looks again even without any hint of work. */
  private nextPollAt = 0;
  private failures = 0;
  /** No claim is sent before this monotonic time (backoff after a failed claim). */
  private pausedUntil = 0;
  /** Claims sent and not yet returned, and the slots they may fill. */
  private readonly claims = new Set<Promise<void>>();
  private reservedSlots = 0;
  /**
   * The last claim's queues have flow-control settings: their room is what the database sees
   * processing, so slots whose outcomes are still unwritten are not counted free (a claim for
   * them would come back short and leave the worker waiting for a notification).
   */
  private limited = false;
  private subscription: Subscription | undefined;
  /**
   * The last full look answered: when it was sent (monotonic), and how long before its own now
   * the oldest job it took had become available (0 when it took none).
   */
  private fullLook: { sentAt: number; lagMs: number } | undefined;

  /** Free slots worth a claim without waiting out the cooldown, given a backlog. */
  private readonly halfBatch: number;

  constructor(private readonly o: ProducerOptions) {
    this.halfBatch = Math.ceil(Math.min(o.maxBatch, o.slots) / 2);
  }

  /**
   * Starts claiming at once and resolves once the listener is up. The first claim does not
   * wait for the listener (opening its connection is a round trip or two): whatever was
   * announced before the listener was up is looked for again the moment it is.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
    if (this.o.notifications && this.o.engine.capabilities.notifications) {
      try {
        this.subscription = await this.o.engine.notifyListen({
          topic: JOBS_TOPIC,
          onNotify: (queue) => {
            if (this.o.queues.includes(queue)) this.nudge();
          },
          // Whatever was announced while the listener was down: look now.
          onReconnect: () => this.nudge(),
        });
        // Stopped while the listener was opening: close it here, stop() found none to close.
        if (!this.running) await this.subscription.unsubscribe().catch(() => {});
        else this.nudge();
      } catch (error) {
        this.o.onError(error); // polling still works
      }
    }
  }

  /** Stops claiming; resolves when no claim is in flight any more. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.waitTimer?.cancel();
    this.wake?.();
    await this.subscription?.unsubscribe().catch(() => {});
    await this.loopDone;
  }

  /** Work may be waiting (notification, or a hint from the worker); claim soon. */
  nudge(): void {
    this.workLikely = true;
    this.wake?.();
  }

  /**
   * A slot became free, or a finished job's outcome was written: the loop looks again (and
   * claims at once if work seems likely).
   */
  slotFreed(): void {
    this.wake?.();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const free =
        this.o.freeSlots() -
        this.reservedSlots +
        (this.limited ? -this.o.unwritten() : (this.o.aheadRoom?.() ?? 0));
      // A claim's return or a finishing job wakes us.
      if (free <= 0 || this.claims.size >= CLAIMS_IN_FLIGHT) {
        await this.sleep(undefined);
        continue;
      }
      const now = this.o.clock.monotonic();
      if (now < this.pausedUntil) {
        await this.sleep(this.pausedUntil - now);
        continue;
      }
      const likely = this.workLikely || this.backlog;
      // A second claim beside one in flight only with a backlog (or news of fresh work).
      if (this.claims.size > 0 && !likely) {
        await this.sleep(undefined);
        continue;
      }
      if (!likely && now < this.nextPollAt) {
        await this.sleep(this.nextPollAt - now);
        continue;
      }
      // The cooldown gathers a burst of notifications, or of jobs finishing one by one, into
      // one claim. With a backlog and half a batch of slots free there is nothing to gather:
      // waiting would only idle the worker (it capped a default worker at 200 claims a second).
      const sinceLast = now - this.lastClaimAt;
      const batchReady = this.backlog && free >= this.halfBatch;
      if (!batchReady && sinceLast < this.o.cooldownMs) {
        await this.sleep(this.o.cooldownMs - sinceLast);
        continue;
      }
      const claim = this.claim(Math.min(free, this.o.maxBatch)).catch(this.o.onError);
      this.claims.add(claim);
      void claim.finally(() => {
        this.claims.delete(claim);
        this.wake?.();
      });
    }
    await Promise.all(this.claims);
  }

  private async claim(limit: number): Promise<void> {
    this.workLikely = false;
    const sentAt = this.o.clock.monotonic();
    this.lastClaimAt = sentAt;
    this.nextPollAt = sentAt + jitter(this.o.pollIntervalMs, 0.1);
    this.reservedSlots += limit;
    const availableWithinMs = this.boundFor(sentAt);
    let jobs: ClaimedJobs;
    try {
      jobs = await this.o.engine.jobClaimBatch({
        queues: this.o.queues,
        workerId: this.o.workerId,
        limit,
        ...(this.o.types === undefined ? {} : { types: this.o.types }),
        leaseTtlMs: this.o.leaseTtlMs,
        ...(availableWithinMs === undefined ? {} : { availableWithinMs }),
      });
      this.failures = 0;
      this.o.claimTook?.(this.o.clock.monotonic() - sentAt);
    } catch (error) {
      this.failures++;
      this.o.onError(error);
      this.pausedUntil =
        this.o.clock.monotonic() +
        backoffDelay({ baseMs: 100, capMs: this.o.pollIntervalMs }, this.failures);
      this.workLikely = true;
      return;
    } finally {
      this.reservedSlots -= limit;
    }
    if (availableWithinMs === undefined) this.fullLook = { sentAt, lagMs: oldestLag(jobs) };
    // A full batch says more is waiting; a stop during the claim still hands the jobs to the
    // executor, which runs them (a drain finishes or hands back what it holds).
    this.backlog = jobs.length === limit;
    this.limited = jobs.limited === true;
    if (this.backlog) this.workLikely = true;
    for (const job of jobs) this.o.dispatch(job, sentAt);
    this.o.answered?.(jobs.length, limit);
  }

  /**
   * The bound of a claim sent at `sentAt` (JobClaimParams.availableWithinMs), or undefined for a
   * full look: the oldest job the last full look took, on the database's clock, less the margin.
   */
  private boundFor(sentAt: number): number | undefined {
    const look = this.fullLook;
    if (!look || sentAt - look.sentAt >= FULL_LOOK_MS) return undefined;
    return look.lagMs + (sentAt - look.sentAt) + BOUND_MARGIN_MS;
  }

  /** Waits for `ms`, or until woken; `undefined` waits only for a wake-up. */
  private sleep(ms: number | undefined): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.waitTimer?.cancel();
        this.waitTimer = undefined;
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      if (ms !== undefined) this.waitTimer = this.o.clock.setTimer(ms, done);
    });
  }
}

/** How long before their claim the oldest of `jobs` had become available; 0 for none. */
function oldestLag(jobs: readonly Job[]): number {
  let lag = 0;
  for (const job of jobs) {
    const claimedAt = job.claimedAt?.getTime();
    if (claimedAt !== undefined) lag = Math.max(lag, claimedAt - job.availableAt.getTime());
  }
  return lag;
}
