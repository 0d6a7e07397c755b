// The shapes the service sends (see src/service/snapshot.ts and the OpenAPI document).
export interface LeaseView {
  id: number;
  resource: string;
  holder: string;
  token: number;
  state: 'active' | 'expired' | 'released';
  acquiredAt: string;
  renewedAt: string | null;
  releasedAt: string | null;
  expiresAt: string;
  renewCount: number;
  ttlMs: number;
}

export interface WorkerView {
  id: string;
  name: string;
  host: string;
  pid: number;
  status: string;
  inFlight: number;
  lastSeenAt: string;
  queues: string[];
  /** `library`: a toolkit worker; `http`: a task worker over the HTTP API. */
  kind: 'library' | 'http';
}

export interface GeneratorView {
  state: 'started' | 'stopped';
  runningOn: string | null;
  token: number | null;
  leaseExpiresAt: string | null;
  changedBy: string | null;
  changedAt: string | null;
}

/** An election's latest term (GET /api/leaders). */
export interface LeaderView {
  election: string;
  instanceId: string;
  token: number;
  electedAt: string;
  expiresAt: string;
  state: 'active' | 'expired' | 'released';
}

/** A schedule from its newest claimed slot (GET /api/schedules). */
export interface ScheduleView {
  name: string;
  lastSlot: string;
  holder: string;
  token: number | null;
  claimedAt: string;
  nextSlot: string | null;
  runs: number;
}

/** A queue's flow control (GET /api/queues, the snapshot's `queues`); `rate.per` in ms. */
export interface QueueSettingsView {
  queue: string;
  paused: boolean;
  concurrency: number | null;
  perKeyConcurrency: number | null;
  rate: { limit: number; per: number } | null;
  fairness: 'oldest' | 'key';
}

export interface Snapshot {
  at: string;
  databaseTime: string;
  leases: LeaseView[];
  jobs: { queue: string; status: string; count: number }[];
  /** Every queue with jobs or settings, by name. */
  queues: QueueSettingsView[];
  workers: WorkerView[];
  generator: GeneratorView;
  leaders: LeaderView[];
  schedules: ScheduleView[];
}

export interface JobView {
  id: number;
  queue: string;
  type: string | null;
  key: string | null;
  payload: unknown;
  headers: Record<string, string>;
  partitionKey: string | null;
  priority: number;
  status: string;
  attempts: number;
  maxAttempts: number;
  availableAt: string;
  claimedBy: string | null;
  leaseExpiresAt: string | null;
  generation: number;
  result: unknown;
  lastError: string | null;
  errors: { attempt: number; at: string; error: string }[];
  createdAt: string;
  finishedAt: string | null;
  /** How long one attempt may run (ms); null: the worker's default. */
  timeoutMs: number | null;
  /** What the latest attempt last reported (ctx.progress): a percentage, an object, or null. */
  progress: number | Record<string, unknown> | null;
  /** The flow parent this job is a child of (decision 0255); null outside a flow. */
  parentId?: number | null;
  /** GET /api/jobs/:id only: a flow parent's first 100 children, and how many in all. */
  children?: JobChildView[];
  childCount?: number;
}

/** A child of a flow's parent, as GET /api/jobs/:id lists it. */
export interface JobChildView {
  id: number;
  queue: string;
  type: string | null;
  status: string;
  parentPolicy: string;
}

/** One term of a lease or an election (GET /api/leases/:resource/terms, /api/leaders/:election/terms). */
export interface TermView {
  holder: string;
  token: number;
  startedAt: string;
  /** Null while the term is held. */
  endedAt: string | null;
  ended: 'released' | 'expired' | 'superseded' | null;
  /** The term before it ran out under another holder. */
  takeover: boolean;
}
