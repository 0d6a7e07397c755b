/**
 * The worker family in process: one record per worker instance, its liveness judged by
 * `lastSeenAt` against the injected clock, as the SQL judges it against the database's now.
 */
import type { WorkerInfo, WorkerStatus } from '../../core/types.js';
import type { WorkerOperations, WorkerRegisterParams } from '../workers.js';

type WorkerRecord = { -readonly [K in keyof WorkerInfo]: WorkerInfo[K] };

export class MemoryWorkers implements WorkerOperations {
  /** In registration order, which is the order `workerList` answers in. */
  private readonly workers = new Map<string, WorkerRecord>();

  constructor(private readonly now: () => Date) {}

  /** Registers, or re-registers an id seen before: alive again, as if it had just started. */
  async workerRegister(p: WorkerRegisterParams): Promise<WorkerInfo> {
    const now = this.now();
    const record: WorkerRecord = {
      id: p.id,
      name: p.name,
      host: p.host,
      pid: p.pid,
      queues: [...p.queues],
      concurrency: p.concurrency,
      status: 'alive',
      startedAt: now,
      lastSeenAt: now,
      inFlight: 0,
      kind: p.kind ?? 'library',
    };
    this.workers.set(p.id, record);
    return view(record);
  }

  async workerHeartbeat(p: {
    id: string;
    inFlight: number;
    status?: WorkerStatus;
  }): Promise<WorkerInfo | null> {
    const r = this.workers.get(p.id);
    if (!r) return null;
    r.lastSeenAt = this.now();
    r.inFlight = p.inFlight;
    if (p.status) r.status = p.status;
    return view(r);
  }

  /** A live worker lists `queue` (a draining one no longer claims). */
  serves(queue: string): boolean {
    for (const r of this.workers.values())
      if (r.status === 'alive' && r.queues.includes(queue)) return true;
    return false;
  }

  async workerList(p: { status?: WorkerStatus; limit: number }): Promise<WorkerInfo[]> {
    return [...this.workers.values()]
      .filter((r) => p.status === undefined || r.status === p.status)
      .slice(0, Math.max(0, p.limit))
      .map(view);
  }

  /** Silent means last seen longer than `silentForMs` ago; stopped workers are left alone. */
  async workerMarkDead(p: { silentForMs: number; limit: number }): Promise<number> {
    const cutoff = this.now().getTime() - p.silentForMs;
    const silent = [...this.workers.values()]
      .filter(
        (r) => (r.status === 'alive' || r.status === 'draining') && r.lastSeenAt.getTime() < cutoff,
      )
      .sort((a, b) => a.lastSeenAt.getTime() - b.lastSeenAt.getTime())
      .slice(0, Math.max(0, p.limit));
    for (const r of silent) r.status = 'dead';
    return silent.length;
  }
}

function view(r: WorkerRecord): WorkerInfo {
  return structuredClone(r);
}
