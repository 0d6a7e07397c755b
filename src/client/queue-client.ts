/**
 * Queue flow control over HTTP (decision 0242): every queue with its counts and settings, pause,
 * resume, configure (an admin key), and why a job waits. Answers use the library's shapes
 * (core/types): `rate.per` in milliseconds, an explanation's dates as Dates.
 */
import { isLeaseholdError } from '../core/errors.js';
import type { JobExplanation, JobStatus, QueueFairness, QueueSettings } from '../core/types.js';
import { HttpClient, type HttpClientOptions } from './http.js';

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

export class QueueClient {
  private readonly http: HttpClient;

  constructor(options: HttpClientOptions) {
    this.http = new HttpClient(options);
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

function queuePath(name: string): string {
  return `/api/queues/${encodeURIComponent(name)}`;
}
