/**
 * The one door from the clients to the service: JSON over fetch with a timeout, API key, and
 * error bodies turned back into LeaseholdErrors with the server's stable code. A network
 * failure, a timeout or a 503 is `unavailable`, so callers retry the same way they would
 * against the library.
 */
import { ERROR_CODES, LeaseholdError, UnavailableError, type ErrorCode } from '../core/errors.js';

export interface HttpClientOptions {
  /** e.g. `http://127.0.0.1:4000` */
  baseUrl: string;
  apiKey?: string;
  /** Per-request timeout (default 10 s). A held lease also bounds it by its trust deadline. */
  timeoutMs?: number;
}

export interface HttpAnswer<T> {
  readonly status: number;
  readonly body: T;
}

export class HttpClient {
  private readonly baseUrl: string;

  constructor(private readonly options: HttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<HttpAnswer<T>> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 10_000);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (error) {
      throw new UnavailableError(`${method} ${path}: the service did not answer`, error);
    }
    const text = await response.text().catch(() => '');
    const parsed = text === '' ? undefined : safeJson(text);
    if (response.ok) return { status: response.status, body: parsed as T };
    throw toError(method, path, response.status, parsed);
  }
}

function toError(method: string, path: string, status: number, body: unknown): LeaseholdError {
  const error = (body as { error?: { code?: string; message?: string; details?: object } })?.error;
  const code = error?.code && error.code in ERROR_CODES ? (error.code as ErrorCode) : undefined;
  if (status === 503 || code === 'unavailable')
    return new UnavailableError(`${method} ${path}: ${error?.message ?? 'service unavailable'}`);
  return new LeaseholdError(
    code ?? (status >= 500 ? 'internal' : 'invalid_argument'),
    error?.message ?? `${method} ${path} answered ${status}`,
    { status, ...(error?.details ?? {}) },
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
