/**
 * The trust deadlines of a worker's jobs, with one timer per distinct deadline instead of one
 * per job. A claimed batch shares its deadline (every job's claim was sent at the same moment),
 * and so does every job confirmed by one renewal round, so a worker running a thousand jobs
 * keeps a handful of timers. The timers are the worker's own: a renewal stuck on a dead
 * connection cannot delay them.
 */
import type { Clock, Timer } from '../core/clock.js';

/** What a deadline does to a run whose trust ran out. */
export interface Expirable {
  expire(): void;
}

interface Group<R> {
  readonly at: number;
  readonly members: Set<R>;
  readonly timer: Timer;
}

export class TrustDeadlines<R extends Expirable> {
  private readonly groups = new Map<number, Group<R>>();
  private readonly groupOf = new Map<R, Group<R>>();

  /**
   * Trust lasts `leaseTtlMs - marginMs` from the moment a claim or renewal was sent;
   * `onExpired` hears of each member whose deadline passed, after it expired.
   */
  constructor(
    private readonly clock: Clock,
    private readonly leaseTtlMs: number,
    private readonly marginMs: number,
    private readonly onExpired: (member: R) => void = () => {},
  ) {}

  /** A claim or renewal of `member` sent at `sentAt` (monotonic) succeeded. */
  trustFrom(member: R, sentAt: number): void {
    const at = sentAt + this.leaseTtlMs - this.marginMs;
    const current = this.groupOf.get(member);
    if (current?.at === at) return;
    if (current) this.leave(member, current);
    const group = this.groups.get(at) ?? this.open(at);
    group.members.add(member);
    this.groupOf.set(member, group);
  }

  /** `member` needs no deadline any more (finished, or already lost). */
  forget(member: R): void {
    const group = this.groupOf.get(member);
    if (group) this.leave(member, group);
  }

  /** Deadlines pending, for tests and metrics. */
  get timers(): number {
    return this.groups.size;
  }

  private open(at: number): Group<R> {
    const group: Group<R> = {
      at,
      members: new Set(),
      timer: this.clock.setTimer(at - this.clock.monotonic(), () => this.expire(group)),
    };
    this.groups.set(at, group);
    return group;
  }

  private leave(member: R, group: Group<R>): void {
    this.groupOf.delete(member);
    group.members.delete(member);
    if (group.members.size === 0) {
      group.timer.cancel();
      this.groups.delete(group.at);
    }
  }

  private expire(group: Group<R>): void {
    this.groups.delete(group.at);
    for (const member of group.members) {
      this.groupOf.delete(member); // so that expiring, it finds no deadline to forget
      member.expire();
      this.onExpired(member);
    }
  }
}
