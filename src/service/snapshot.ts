/**
 * The fleet's state in one object, read from the database: what the dashboard draws and what
 * the SSE stream sends on every connect (so a reconnecting page catches up at once) and then
 * every second while anyone is watching. Reading it costs a handful of indexed queries, and a
 * Snapshotter runs only while at least one client is subscribed.
 */
import type { WorkerKind } from '../core/types.js';
import type { LeaseholdFacade } from '../leasehold.js';
import { generatorStatus, type GeneratorStatus } from '../tasks/task-domain.js';
import { BackgroundService } from '../runtime/service.js';
import { readLeaders, readSchedules, type LeaderJson, type ScheduleJson } from './leadership.js';
import {
  leaseJson,
  queueSettingsJson,
  type LeaseJson,
  type QueueSettingsJson,
} from './serialize.js';

export interface FleetSnapshot {
  readonly at: string;
  readonly databaseTime: string;
  readonly leases: LeaseJson[];
  readonly jobs: { queue: string; status: string; count: number }[];
  /** The flow control of every queue that has jobs or settings, by name (GET /api/queues). */
  readonly queues: QueueSettingsJson[];
  readonly workers: {
    id: string;
    name: string;
    host: string;
    pid: number;
    status: string;
    inFlight: number;
    lastSeenAt: string;
    queues: readonly string[];
    kind: WorkerKind;
  }[];
  readonly generator: GeneratorStatus;
  /** The latest term of every election, in name order. */
  readonly leaders: LeaderJson[];
  /** Every schedule with a claimed slot kept, in name order. */
  readonly schedules: ScheduleJson[];
}

/** Leases shown: the newest rows (each resource is one row, whatever its state). */
const LEASE_LIMIT = 200;

export async function readSnapshot(lh: LeaseholdFacade): Promise<FleetSnapshot> {
  const [now, leases, queues, workers, generator, leaders, schedules] = await Promise.all([
    lh.now(),
    lh.leases.list({ state: 'all', limit: LEASE_LIMIT }),
    lh.jobs.queues().catch(() => []),
    lh.jobs.workers({ limit: 200 }).catch(() => []),
    generatorStatus(lh),
    readLeaders(lh, 200).catch(() => []),
    readSchedules(lh, 200).catch(() => []),
  ]);
  return {
    at: new Date().toISOString(),
    databaseTime: now.toISOString(),
    leases: leases.map(leaseJson),
    jobs: queues.flatMap((q) =>
      Object.entries(q.counts)
        .filter(([, count]) => count > 0)
        .map(([status, count]) => ({ queue: q.queue, status, count })),
    ),
    queues: queues.map(queueSettingsJson),
    workers: workers.map((w) => ({
      id: w.id,
      name: w.name,
      host: w.host,
      pid: w.pid,
      status: w.status,
      inFlight: w.inFlight,
      lastSeenAt: w.lastSeenAt.toISOString(),
      queues: w.queues,
      kind: w.kind,
    })),
    generator,
    leaders,
    schedules,
  };
}

export class Snapshotter extends BackgroundService<FleetSnapshot | undefined> {
  private readonly subscribers = new Set<(snapshot: FleetSnapshot) => void>();

  constructor(
    private readonly lh: LeaseholdFacade,
    intervalMs = 1_000,
  ) {
    super('snapshotter', { intervalMs, firstRunDelayMs: 0, clock: lh.clock });
  }

  subscribe(fn: (snapshot: FleetSnapshot) => void): () => void {
    this.subscribers.add(fn);
    this.start();
    return () => {
      this.subscribers.delete(fn);
    };
  }

  async runOnce(): Promise<FleetSnapshot | undefined> {
    if (this.subscribers.size === 0) return undefined;
    const snapshot = await readSnapshot(this.lh);
    for (const fn of this.subscribers) fn(snapshot);
    return snapshot;
  }
}
