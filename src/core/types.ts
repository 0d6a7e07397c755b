/**
 * Domain types shared by every layer. Engines return these, never raw rows.
 *
 * Fencing tokens are JavaScript numbers: the column is a bigint, and a token grows by one per
 * acquisition of one resource, so 2^53 is out of reach; numbers survive JSON, bigints do not.
 */
export type FencingToken = number;

export type LeaseState = 'active' | 'expired' | 'released';
export type LeaseListFilter = 'all' | 'active' | 'expired' | 'renewed' | 'released';
export const LEASE_LIST_FILTERS: readonly LeaseListFilter[] = [
  'all',
  'active',
  'expired',
  'renewed',
  'released',
];

export interface Lease {
  /** Row id; stable across re-acquisitions of the same resource. */
  readonly id: number;
  readonly resource: string;
  readonly holder: string;
  /** Strictly increases on every acquisition of this resource; never reused. */
  readonly token: FencingToken;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  /** When the row was first created (first acquisition ever). */
  readonly createdAt: Date;
  /** When the current holder acquired it (start of this token's term). */
  readonly acquiredAt: Date;
  readonly renewedAt: Date | null;
  readonly releasedAt: Date | null;
  readonly expiresAt: Date;
  /** Renewals during the current term. */
  readonly renewCount: number;
  /** The ttl the last acquire or renew asked for, in ms. */
  readonly ttlMs: number;
  /** State on the engine's clock at the moment the lease was read. */
  readonly state: LeaseState;
}

/**
 * One permit of a counting semaphore (`lh.locks.semaphore(name, { permits })`): a term on one of
 * the semaphore's slots, held by `holder` until `expiresAt` unless renewed or released. At most
 * `permits` permits of a name are valid at any instant of the engine's clock.
 */
export interface SemaphorePermit {
  /** The semaphore's name. */
  readonly name: string;
  /** The slot the permit occupies, in `0 .. permits - 1` of the acquire that took it. */
  readonly slot: number;
  readonly holder: string;
  /** Strictly increases with every permit granted on this name, whatever the slot; never reused. */
  readonly token: FencingToken;
  readonly acquiredAt: Date;
  readonly renewedAt: Date | null;
  readonly releasedAt: Date | null;
  readonly expiresAt: Date;
  readonly renewCount: number;
  /** The ttl the last acquire or renew asked for, in ms. */
  readonly ttlMs: number;
  /** State on the engine's clock at the moment the permit was read. */
  readonly state: LeaseState;
}

/**
 * Job states. pending -> processing (claimed) -> completed | pending (retry, hand-back,
 * rescue) | dead (attempts exhausted, or a final failure); pending | processing -> cancelled.
 * completed, dead and cancelled are final until an operator retries (-> pending). A parent of
 * a flow starts `waiting` (for its children; decision 0255): -> pending once they are done,
 * -> dead when a child fails it, -> cancelled.
 */
export type JobStatus = 'waiting' | 'pending' | 'processing' | 'completed' | 'dead' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = [
  'waiting',
  'pending',
  'processing',
  'completed',
  'dead',
  'cancelled',
];

/** One failed attempt, kept on the job (the newest 20) for the dashboard and for debugging. */
export interface JobAttemptError {
  readonly attempt: number;
  readonly at: Date;
  readonly error: string;
  /** The worker whose claim failed, and that claim's fencing token (its generation). Absent
   * on entries written before they were recorded, and on a flow parent failed by a child. */
  readonly worker?: string | null;
  readonly token?: number;
  /** How often that claim was renewed before it failed. */
  readonly renewals?: number;
}

export interface Job {
  readonly id: number;
  readonly queue: string;
  /** A label for routing or versioning (`send-email.v1`); null when not given. */
  readonly type: string | null;
  /** Dedup key: while a job with this key is pending or processing, enqueue returns it. */
  readonly key: string | null;
  readonly payload: unknown;
  readonly headers: Readonly<Record<string, string>>;
  /** Jobs sharing a partition key run one at a time, in enqueue order. */
  readonly partitionKey: string | null;
  /** Larger runs first; default 0. */
  readonly priority: number;
  readonly status: JobStatus;
  /** Claims so far (a hand-back on drain gives its attempt back). */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** Not claimable before this instant (delay, retry backoff). */
  readonly availableAt: Date;
  readonly claimedBy: string | null;
  readonly claimedAt: Date | null;
  readonly leaseExpiresAt: Date | null;
  /** The job's fencing token: bumped on every claim, never reused. */
  readonly generation: FencingToken;
  readonly result: unknown;
  readonly lastError: string | null;
  readonly errors: readonly JobAttemptError[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** When it reached completed, dead or cancelled. */
  readonly finishedAt: Date | null;
  /**
   * How long one attempt may run before it is failed and its signal fires (ms); null when the
   * job has none and the worker's default applies.
   */
  readonly timeoutMs: number | null;
  /**
   * What the handler of the latest attempt last reported with `ctx.progress` (decision 0251): a
   * percentage 0 to 100 or a small JSON object; null before it reports. A claim clears it; it
   * stays after the attempt ends, so a failed or finished job shows how far it got.
   */
  readonly progress: JobProgress | null;
  /** The job whose flow child this job is (decision 0255); null for a job outside a flow or a root. */
  readonly parentId: number | null;
  /** How often the latest claim was renewed, and when last (null: not yet); a claim resets both. */
  readonly renewals: number;
  readonly renewedAt: Date | null;
}

/** A job's progress: a percentage from 0 to 100, or a JSON object of at most 64 KiB. */
export type JobProgress = number | Readonly<Record<string, unknown>>;

/**
 * One recorded step of a job (`ctx.step`, `ctx.sleep`; decision 0254): its outcome, committed
 * once, in the transaction of the step's own writes. A sleep's value is its wake-up instant as
 * an ISO string.
 */
export interface JobStep {
  readonly name: string;
  /** The step function's answer as JSON stores it (undefined became null). */
  readonly value: unknown;
  /** The generation (fencing token) of the run that recorded it. */
  readonly generation: FencingToken;
  readonly recordedAt: Date;
}

export type WorkerStatus = 'alive' | 'draining' | 'dead' | 'stopped';
export const WORKER_STATUSES: readonly WorkerStatus[] = ['alive', 'draining', 'dead', 'stopped'];

/** A row of the workers table: one per worker instance (a process may run several). */
export interface WorkerInfo {
  readonly id: string;
  readonly name: string;
  readonly host: string;
  readonly pid: number;
  readonly queues: readonly string[];
  readonly concurrency: number;
  readonly status: WorkerStatus;
  readonly startedAt: Date;
  readonly lastSeenAt: Date;
  readonly inFlight: number;
  /** `library`: a worker of this toolkit; `http`: a task worker registered over the HTTP API. */
  readonly kind: WorkerKind;
}

/** Where a worker runs its jobs: in a toolkit worker, or claimed over HTTP (decision 0264). */
export type WorkerKind = 'library' | 'http';
export const WORKER_KINDS: readonly WorkerKind[] = ['library', 'http'];

/** How a queue's claims order pending jobs: oldest first, or round-robin across partition keys. */
export type QueueFairness = 'oldest' | 'key';
export const QUEUE_FAIRNESS: readonly QueueFairness[] = ['oldest', 'key'];

/** A sliding window: at most `limit` jobs of the queue start in any window of `per` ms. */
export interface QueueRate {
  readonly limit: number;
  readonly per: number;
}

/**
 * A queue's flow control, as stored in the database (defaults for a queue never configured).
 * `null` means no limit; `perKeyConcurrency` is 1 unless changed.
 */
export interface QueueSettings {
  readonly queue: string;
  readonly paused: boolean;
  readonly concurrency: number | null;
  readonly perKeyConcurrency: number | null;
  readonly rate: QueueRate | null;
  readonly fairness: QueueFairness;
}

/** The settings of a queue nobody has configured. */
export function defaultQueueSettings(queue: string): QueueSettings {
  return {
    queue,
    paused: false,
    concurrency: null,
    perKeyConcurrency: 1,
    rate: null,
    fairness: 'oldest',
  };
}

/** True when `s` limits nothing: the engines then keep no settings for the queue. */
export function isDefaultQueueSettings(s: QueueSettings): boolean {
  const d = defaultQueueSettings(s.queue);
  return (
    s.paused === d.paused &&
    s.concurrency === d.concurrency &&
    s.perKeyConcurrency === d.perKeyConcurrency &&
    s.rate === null &&
    s.fairness === d.fairness
  );
}

/**
 * Why a job is not running (`lh.queue(name).explain(id)`), the first that applies in this
 * order: `children` (a flow's parent waiting for `unfinished` children); not pending at all; `scheduled` / `backoff` (not available until `until`); `paused`;
 * `partition` (behind job `behind` of its partition key); `concurrency` (`inFlight` of `limit`);
 * `rate` (the window's next start at `nextSlotAt`); `no-worker` (no live worker serves the
 * queue); otherwise `ready` (the next claim may take it).
 */
export type JobExplanation =
  | { readonly reason: 'children'; readonly unfinished: number }
  | { readonly reason: 'not-pending'; readonly status: JobStatus }
  | { readonly reason: 'scheduled' | 'backoff'; readonly until: Date }
  | { readonly reason: 'paused' }
  | { readonly reason: 'partition'; readonly behind: number }
  | { readonly reason: 'concurrency'; readonly inFlight: number; readonly limit: number }
  | {
      readonly reason: 'rate';
      readonly nextSlotAt: Date;
      readonly limit: number;
      readonly per: number;
    }
  | { readonly reason: 'no-worker' }
  | { readonly reason: 'ready' };

export type JobExplanationReason = JobExplanation['reason'];
