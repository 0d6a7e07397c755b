/**
 * Tasks over HTTP (the seed's task API): create, claim the next one, renew the claim, complete,
 * fail, hand back. The method names are the library's words (decision 0235); the routes and
 * JSON fields they call keep the seed's (`/heartbeat`, `must_heartbeat_before`). Every call that touches a claimed task sends the claim's token, so a worker whose claim
 * moved on is refused (`lease_lost`) instead of overwriting the new owner's work.
 */
import { isLeaseholdError } from '../core/errors.js';
import type { FencingToken } from '../core/types.js';
import { HttpClient, type HttpClientOptions } from './http.js';

export interface Task {
  id: number;
  task_data: unknown;
  status: string;
  scheduled_at: string;
  processor: string | null;
  token: FencingToken;
  attempts: number;
  max_attempts: number;
  started_at: string | null;
  must_heartbeat_before: string | null;
  processed_at: string | null;
  task_output: unknown;
  last_error: string | null;
  created_at: string;
}

export interface CreateTaskOptions {
  scheduledAt?: Date;
  key?: string;
  partitionKey?: string;
  priority?: number;
  maxAttempts?: number;
  /** With `key`: `'replace'` overwrites the live task while it is pending (decision 0252). */
  onConflict?: 'keep' | 'replace';
  /** With `key`: run once, this long after the last create with the key (ms or `'5s'`). */
  debounce?: number | string;
}

/** What `create` answers: the task, and whether this create overwrote a pending one. */
export type CreatedTask = Task & { replaced: boolean };

export interface ClaimRef {
  processor: string;
  token: FencingToken;
}

export interface RenewTaskOptions {
  leaseSeconds?: number;
  signal?: AbortSignal;
}

/** What a renewal answers: the new deadline of the claim. */
export interface TaskRenewal {
  mustRenewBefore: Date;
  /** @deprecated the former name of `mustRenewBefore` (decision 0235): the same date. */
  mustHeartbeatBefore: Date;
}

/** What a task worker says of itself when it registers (`PUT /api/workers/:id`). */
export interface WorkerRegistration {
  name: string;
  host: string;
  pid: number;
  queues: string[];
  concurrency: number;
}

/** A worker's row as the service answers it (`GET /api/workers`). */
export interface RegisteredWorker extends WorkerRegistration {
  id: string;
  status: 'alive' | 'draining' | 'dead' | 'stopped';
  kind: 'library' | 'http';
  startedAt: string;
  lastSeenAt: string;
  inFlight: number;
}

export class TaskClient {
  private readonly http: HttpClient;

  constructor(options: HttpClientOptions) {
    this.http = new HttpClient(options);
  }

  async create(
    taskData: Record<string, unknown>,
    options: CreateTaskOptions = {},
  ): Promise<CreatedTask> {
    const body: Record<string, unknown> = { task_data: taskData };
    if (options.scheduledAt) body.scheduled_at = options.scheduledAt.toISOString();
    if (options.key !== undefined) body.key = options.key;
    if (options.partitionKey !== undefined) body.partition_key = options.partitionKey;
    if (options.priority !== undefined) body.priority = options.priority;
    if (options.maxAttempts !== undefined) body.max_attempts = options.maxAttempts;
    if (options.onConflict !== undefined) body.on_conflict = options.onConflict;
    if (options.debounce !== undefined) body.debounce = options.debounce;
    const task = (await this.http.request<CreatedTask>('POST', '/api/tasks', body)).body;
    // A service older than decision 0252 sends no `replaced`: it never replaces.
    return { ...task, replaced: task.replaced === true };
  }

  /** Claims the next ready task, or null when none is ready. */
  async next(
    workerId: string,
    options: { leaseSeconds?: number; signal?: AbortSignal } = {},
  ): Promise<Task | null> {
    // The task API names the worker id `processor` (the seed's wire name).
    const body: Record<string, unknown> = { processor: workerId };
    if (options.leaseSeconds !== undefined) body.lease_seconds = options.leaseSeconds;
    const answer = await this.http.request<Task | undefined>(
      'POST',
      '/api/tasks/next',
      body,
      options.signal,
    );
    return answer.status === 204 ? null : (answer.body ?? null);
  }

  /**
   * Renews the claim (`PUT /api/tasks/:id/heartbeat`, the seed's route); throws `lease_lost` or
   * `task_done` when it is no longer ours.
   */
  async renew(id: number, claim: ClaimRef, options: RenewTaskOptions = {}): Promise<TaskRenewal> {
    const body: Record<string, unknown> = { ...claim };
    if (options.leaseSeconds !== undefined) body.lease_seconds = options.leaseSeconds;
    const answer = await this.http.request<{ must_heartbeat_before: string }>(
      'PUT',
      `/api/tasks/${id}/heartbeat`,
      body,
      options.signal,
    );
    const mustRenewBefore = new Date(answer.body.must_heartbeat_before);
    return { mustRenewBefore, mustHeartbeatBefore: mustRenewBefore };
  }

  /** @deprecated the former name of `renew()` (decision 0235); it does the same. */
  heartbeat(id: number, claim: ClaimRef, options: RenewTaskOptions = {}): Promise<TaskRenewal> {
    return this.renew(id, claim, options);
  }

  async complete(id: number, claim: ClaimRef, output?: unknown): Promise<Task> {
    const body = { ...claim, task_output: output ?? null };
    return (await this.http.request<Task>('PUT', `/api/tasks/${id}/complete`, body)).body;
  }

  async fail(id: number, claim: ClaimRef, error: string, retryInSeconds?: number): Promise<Task> {
    const body: Record<string, unknown> = { ...claim, error: error.slice(0, 4096) || 'failed' };
    if (retryInSeconds !== undefined) body.retry_in_seconds = retryInSeconds;
    return (await this.http.request<Task>('PUT', `/api/tasks/${id}/fail`, body)).body;
  }

  /** Hands the task back (shutdown): pending again at once, the attempt not counted. */
  async handBack(id: number, claim: ClaimRef): Promise<Task> {
    return (await this.http.request<Task>('PUT', `/api/tasks/${id}/hand-back`, claim)).body;
  }

  /**
   * @deprecated the former name of `handBack()` (decision 0235). It calls the seed's route,
   * `PUT /api/tasks/:id/release`, so it also works against a service older than `/hand-back`.
   */
  async release(id: number, claim: ClaimRef): Promise<Task> {
    return (await this.http.request<Task>('PUT', `/api/tasks/${id}/release`, claim)).body;
  }

  /**
   * Registers this task worker (again) in the service's workers list, as kind `http`, so
   * operators see it beside the library's workers (decision 0264). Keep it fresh with
   * `workerHeartbeat`; a worker silent for a while is marked dead by maintenance.
   */
  async registerWorker(id: string, registration: WorkerRegistration): Promise<RegisteredWorker> {
    const path = `/api/workers/${encodeURIComponent(id)}`;
    return (await this.http.request<{ worker: RegisteredWorker }>('PUT', path, registration)).body
      .worker;
  }

  /**
   * Refreshes the worker's row: jobs in hand and, when it changes, its status (`draining`,
   * `stopped`). Null when the service knows no such worker: register again.
   */
  async workerHeartbeat(
    id: string,
    report: { inFlight: number; status?: 'alive' | 'draining' | 'stopped' },
  ): Promise<RegisteredWorker | null> {
    const path = `/api/workers/${encodeURIComponent(id)}/heartbeat`;
    try {
      return (await this.http.request<{ worker: RegisteredWorker }>('POST', path, report)).body
        .worker;
    } catch (error) {
      if (isLeaseholdError(error, 'not_found')) return null;
      throw error;
    }
  }

  async get(id: number): Promise<Task | null> {
    try {
      return (await this.http.request<Task>('GET', `/api/tasks/${id}`)).body;
    } catch (error) {
      if (isLeaseholdError(error, 'not_found')) return null;
      throw error;
    }
  }

  async list(which: 'all' | 'processed' | 'started' = 'all'): Promise<Task[]> {
    const path = which === 'all' ? '/api/tasks' : `/api/tasks/${which}`;
    return (await this.http.request<{ tasks: Task[] }>('GET', path)).body.tasks;
  }
}
