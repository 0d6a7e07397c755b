/**
 * Queue flow control over HTTP (decision 0242): every queue with its counts and settings, pause,
 * resume, configure (an admin key), and why a job waits. Answers use the library's shapes
 * (core/types): `rate.per` in milliseconds, an explanation's dates as Dates.
 */
import { toMilliseconds, type Duration } from '../core/duration.js';
import {
  AbortedError,
  InvalidArgumentError,
  JobFailedError,
  WaitTimeoutError,
  isLeaseholdError,
} from '../core/errors.js';
import type { ParentPolicy } from '../core/flows.js';
import type { JobExplanation, JobStatus, QueueFairness, QueueSettings } from '../core/types.js';
import { requireSafeInteger } from '../core/validate.js';
import { HttpClient, type HttpClientOptions } from './http.js';

/**
 * The longest wait one long poll asks the service for (its own maximum, 30 s, cuts longer
 * ones): `waitFor` asks again until the job finishes or its own timeout passes.
 */
export const LONG_POLL_MS = 30_000;

/** Time the answer of a long poll may take beyond the wait itself before it counts as lost. */
const LONG_POLL_GRACE_MS = 10_000;

export interface ClientWaitOptions {
  /** Give up after this long (0: ask once): `WaitTimeoutError`. Default: until the job finishes. */
  timeout?: Duration;
  /** Stops the wait: `AbortedError`. */
  signal?: AbortSignal;
}

/** GET /api/jobs/:id/wait's answer; the job as jobJson sends it (dates as ISO strings). */
export interface JobWaitAnswer {
  readonly done: boolean;
  readonly job: {
    readonly id: number;
    readonly queue: string;
    readonly status: JobStatus;
    readonly result: unknown;
    readonly lastError: string | null;
    readonly [field: string]: unknown;
  };
}

/** One queue as GET /api/queues answers it: its settings and its jobs by status. */
export interface QueueInfo extends QueueSettings {
  readonly counts: Readonly<Record<JobStatus, number>>;
}

/** What `configureQueue` may change: fields left out stay as they are, `null` removes a limit. */
export interface QueueSettingsInput {
  concurrency?: number | null;
  perKeyConcurrency?: number | null;
  /** `per`: milliseconds, or a duration such as `'1s'`. */
  rate?: { limit: number; per: number | string } | null;
  fairness?: QueueFairness;
}

/** An explanation as sent: dates are ISO strings. */
type ExplanationJson =
  | Exclude<JobExplanation, { until: Date } | { nextSlotAt: Date }>
  | { reason: 'scheduled' | 'backoff'; until: string }
  | { reason: 'rate'; nextSlotAt: string; limit: number; per: number };

/** A job's enqueue options as JSON: durations in ms or as strings (`'10s'`), runAt an instant. */
export interface FlowJobOptionsJson {
  type?: string;
  headers?: Record<string, string>;
  partitionKey?: string;
  priority?: number;
  delay?: number | string;
  runAt?: Date | string;
  maxAttempts?: number;
  timeout?: number | string;
}

/** A child of a flow over HTTP (the library's FlowChild). */
export interface FlowChildJson {
  queue: string;
  payload: unknown;
  options?: FlowJobOptionsJson & { parentPolicy?: ParentPolicy };
  children?: FlowChildJson[];
}

/** A flow over HTTP (the library's FlowDefinition): only the root may have a key. */
export interface FlowJson {
  payload: unknown;
  options?: FlowJobOptionsJson & { key?: string };
  children: FlowChildJson[];
}

/** A job of an enqueued flow as sent (dates as ISO strings), and its children. */
export interface FlowJobJson {
  readonly job: {
    readonly id: number;
    readonly queue: string;
    readonly status: JobStatus;
    readonly parentId: number | null;
    readonly [field: string]: unknown;
  };
  readonly children: readonly FlowJobJson[];
}

export interface QueueClientOptions extends HttpClientOptions {
  /**
   * The longest wait one long poll of `waitFor` asks for (default and most: LONG_POLL_MS, the
   * service's own cap). Lower it behind a proxy that cuts idle requests sooner.
   */
  longPollMs?: number;
}

export class QueueClient {
  private readonly http: HttpClient;
  private readonly longPollMs: number;

  constructor(options: QueueClientOptions) {
    this.http = new HttpClient(options);
    this.longPollMs =
      options.longPollMs === undefined
        ? LONG_POLL_MS
        : requireSafeInteger('longPollMs', options.longPollMs, 1);
  }

  /** Every queue that has jobs or settings, by name. */
  async queues(): Promise<QueueInfo[]> {
    return (await this.http.request<{ queues: QueueInfo[] }>('GET', '/api/queues')).body.queues;
  }

  /** No job of the queue starts until `resumeQueue`; answers the settings now in force. */
  async pauseQueue(name: string): Promise<QueueSettings> {
    return (await this.http.request<QueueSettings>('POST', `${queuePath(name)}/pause`)).body;
  }

  async resumeQueue(name: string): Promise<QueueSettings> {
    return (await this.http.request<QueueSettings>('POST', `${queuePath(name)}/resume`)).body;
  }

  /** Changes the queue's limits (an admin key); answers the settings now in force. */
  async configureQueue(name: string, settings: QueueSettingsInput): Promise<QueueSettings> {
    const path = `${queuePath(name)}/settings`;
    return (await this.http.request<QueueSettings>('PUT', path, settings)).body;
  }

  /**
   * Waits for job `jobId` to finish, as `lh.queue(name).waitFor` does in process (decision
   * 0249), by long polls of GET /api/jobs/:id/wait of at most `longPollMs` each. Answers the
   * job's result; rejects with `JobFailedError` (code `job_failed`, with `status` and
   * `lastError`) when it ends dead or cancelled, `WaitTimeoutError` (code `timeout`) when
   * `timeout` passes first, `AbortedError` when `signal` fires, `not_found` for an unknown job,
   * and `unavailable` when the service does not answer (the job is untouched: wait again).
   */
  async waitFor<R = unknown>(jobId: number, options: ClientWaitOptions = {}): Promise<R> {
    const id = requireSafeInteger('jobId', jobId, 1);
    if (typeof options !== 'object' || options === null)
      throw new InvalidArgumentError('options', 'must be an object { timeout?, signal? }');
    const { signal } = options;
    if (signal !== undefined && !(signal instanceof AbortSignal))
      throw new InvalidArgumentError('signal', 'must be an AbortSignal');
    const timeoutMs =
      options.timeout === undefined
        ? Number.POSITIVE_INFINITY
        : toMilliseconds('timeout', options.timeout, { min: 0 });
    const giveUpAt = performance.now() + timeoutMs;
    for (;;) {
      if (signal?.aborted) throw aborted(id, signal);
      const pollMs = Math.max(
        0,
        Math.min(this.longPollMs, Math.ceil(giveUpAt - performance.now())),
      );
      let answer: JobWaitAnswer;
      try {
        answer = (
          await this.http.request<JobWaitAnswer>(
            'GET',
            `/api/jobs/${id}/wait?timeout=${pollMs}`,
            undefined,
            signal,
            pollMs + LONG_POLL_GRACE_MS,
          )
        ).body;
      } catch (error) {
        if (signal?.aborted) throw aborted(id, signal);
        throw error;
      }
      const { job } = answer;
      if (answer.done) {
        if (job.status === 'completed') return job.result as R;
        throw new JobFailedError(id, job.status as 'dead' | 'cancelled', job.lastError);
      }
      if (performance.now() >= giveUpAt) throw new WaitTimeoutError(id, job.status, timeoutMs);
    }
  }

  /**
   * Enqueues a flow on queue `name` (POST /api/queues/:name/flows; decision 0255): the root runs
   * once its children are done. `created` is false when the root's key met a live job: `job`
   * is that job and nothing was written. Bad input: `invalid_argument` naming the field.
   */
  async enqueueFlow(
    name: string,
    flow: FlowJson,
  ): Promise<FlowJobJson & { readonly created: boolean }> {
    const path = `${queuePath(name)}/flows`;
    return (await this.http.request<FlowJobJson & { created: boolean }>('POST', path, flow)).body;
  }

  /** Why job `id` is not running; null when there is no such job. */
  async explainJob(id: number): Promise<JobExplanation | null> {
    let answer: ExplanationJson;
    try {
      answer = (await this.http.request<ExplanationJson>('GET', `/api/jobs/${id}/explain`)).body;
    } catch (error) {
      if (isLeaseholdError(error, 'not_found')) return null;
      throw error;
    }
    if ('until' in answer) return { ...answer, until: new Date(answer.until) };
    if ('nextSlotAt' in answer) return { ...answer, nextSlotAt: new Date(answer.nextSlotAt) };
    return answer;
  }
}

function aborted(id: number, signal: AbortSignal): AbortedError {
  return new AbortedError(`the wait for job ${id} was aborted`, signal.reason);
}

function queuePath(name: string): string {
  return `/api/queues/${encodeURIComponent(name)}`;
}
