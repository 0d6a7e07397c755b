/**
 * Talking to the service from the page: JSON calls with the API key (kept in sessionStorage,
 * sent as a Bearer header, never in a URL), and the error body's message for the user.
 */
const KEY_STORAGE = 'leasehold.apiKey';

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function setApiKey(key: string | null): void {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
}

export function authHeaders(): Record<string, string> {
  const key = apiKey();
  return key ? { authorization: `Bearer ${key}` } : {};
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Paths are written from the service's root (`/api/jobs`), but the service may be mounted under
 * a prefix of another app (`/leasehold/`): they are sent relative to the page, which is always
 * served at the service's root with a trailing slash.
 */
export function serviceUrl(path: string): string {
  return path.replace(/^\/+/, '');
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...authHeaders() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(serviceUrl(path), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const parsed = text ? (JSON.parse(text) as unknown) : undefined;
  if (!response.ok) {
    const error = (parsed as { error?: { code: string; message: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? 'internal',
      error?.message ?? response.statusText,
    );
  }
  return parsed as T;
}
