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
  /** When the latest claim took it (the job row keeps only the latest claim). */
  claimedAt?: string | null;
  generation: number;
  result: unknown;
  lastError: string | null;
  /** Failed attempts, newest 20; `worker` and `token`: the failed claim (decision 0266). */
  errors: {
    attempt: number;
    at: string;
    error: string;
    worker?: string | null;
    token?: number;
    renewals?: number;
  }[];
  createdAt: string;
  finishedAt: string | null;
  /** How long one attempt may run (ms); null: the worker's default. */
  timeoutMs: number | null;
  /** What the latest attempt last reported (ctx.progress): a percentage, an object, or null. */
  progress: number | Record<string, unknown> | null;
  /** The flow parent this job is a child of (decision 0255); null outside a flow. */
  parentId?: number | null;
  /** How often the latest claim was renewed, and when last (decision 0269). */
  renewals: number;
  renewedAt: string | null;
  /** GET /api/jobs/:id only: a flow parent's first 100 children, and how many in all. */
  children?: JobChildView[];
  childCount?: number;
  /** GET /api/jobs/:id only: the steps it recorded (ctx.step, ctx.sleep), in order. */
  steps?: JobStepView[];
}

/** A child of a flow's parent, as GET /api/jobs/:id lists it. */
export interface JobChildView {
  id: number;
  queue: string;
  type: string | null;
  status: string;
  parentPolicy: string;
}

// --- job explorer (issue 30 part 2 and 3, decision 0266) ---------------------------------

/** A recorded step (GET /api/jobs/:id `steps`). */
export interface JobStepView {
  name: string;
  value: unknown;
  generation: number;
  recordedAt: string;
}

/** GET /api/jobs/search. */
export interface JobSearchView {
  jobs: JobView[];
  next: number | null;
  total: number;
  totalExact: boolean;
}

/** POST /api/jobs/selection/{retry,cancel,delete}. */
export interface SelectionView {
  done: number;
  results: { id: number; outcome: 'done' | 'not_found' | 'refused'; status?: string }[];
}

/** GET /api/jobs/:id/explain: why a job is not running, and that reason's fields. */
export interface ExplanationView {
  reason: string;
  status?: string;
  unfinished?: number;
  until?: string;
  behind?: number;
  inFlight?: number;
  limit?: number;
  nextSlotAt?: string;
  per?: number;
}

/** Unfinished jobs by status as the maintainer sampled them (decision 0265). */
export interface TrendDepthView {
  waiting: number;
  pending: number;
  processing: number;
}

/** The figures of a minute or of a point (GET /api/trends). */
export interface TrendFiguresView {
  completed: number;
  failed: number;
  dead: number;
  started: number;
  pickupP50Ms: number | null;
  pickupP99Ms: number | null;
  depth: TrendDepthView | null;
}

/** One point of a trends series: `stepMinutes` minutes from `at`. */
export interface TrendPointView extends TrendFiguresView {
  at: string;
  failureRate: number | null;
}

/** A queue's newest recorded minute. */
export interface TrendMinuteView extends TrendFiguresView {
  minute: string;
  queue: string;
}

/** GET /api/trends: the last hour (60 points) or day (288 points of 5 minutes). */
export interface TrendSeriesView {
  window: '1h' | '1d';
  queue: string | null;
  stepMinutes: number;
  from: string;
  to: string;
  points: TrendPointView[];
  latest: TrendMinuteView[];
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
