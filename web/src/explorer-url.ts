/**
 * The job explorer's deep links (decision 0266): `#jobs?queue=emails&status=dead,cancelled`
 * for a filter and `#job/123` for one job, so reloading or sharing the address restores what
 * was on screen. The hash, not the path: the page is one document, possibly mounted under a
 * prefix (decision 0262), and the hash never reaches the server.
 */

export interface ExplorerFilter {
  queue?: string;
  /** Several statuses, any of which matches. */
  status?: string[];
  type?: string;
  key?: string;
  partitionKey?: string;
  /** Created at or after (ISO 8601). */
  from?: string;
  /** Created before (ISO 8601). */
  to?: string;
  /** Text in the payload. */
  text?: string;
  order?: 'newest' | 'oldest';
}

export type ExplorerRoute =
  { kind: 'filter'; filter: ExplorerFilter } | { kind: 'job'; id: number } | { kind: 'other' };

const TEXT_FIELDS = ['queue', 'type', 'key', 'partitionKey', 'from', 'to', 'text'] as const;

export function parseHash(hash: string): ExplorerRoute {
  const job = /^#job\/(\d+)$/.exec(hash);
  if (job) return { kind: 'job', id: Number(job[1]) };
  const filter = /^#jobs\?(.*)$/.exec(hash);
  if (!filter) return { kind: 'other' };
  const params = new URLSearchParams(filter[1]);
  const parsed: ExplorerFilter = {};
  for (const field of TEXT_FIELDS) {
    const value = params.get(field);
    if (value) parsed[field] = value;
  }
  const status = params.get('status');
  if (status) parsed.status = status.split(',').filter(Boolean);
  const order = params.get('order');
  if (order === 'oldest' || order === 'newest') parsed.order = order;
  return { kind: 'filter', filter: parsed };
}

export function filterHash(filter: ExplorerFilter): string {
  return `#jobs?${toParams(filter)}`;
}

/** The filter as URL parameters: the hash's, which the search API's are built from. */
export function toParams(filter: ExplorerFilter): URLSearchParams {
  const params = new URLSearchParams();
  for (const field of TEXT_FIELDS) {
    const value = filter[field];
    if (value) params.set(field, value);
  }
  if (filter.status && filter.status.length > 0) params.set('status', filter.status.join(','));
  if (filter.order === 'oldest') params.set('order', 'oldest');
  return params;
}

/** The search API's query string for `filter`, from `cursor` on. */
export function searchQuery(filter: ExplorerFilter, limit: number, cursor?: number): string {
  const params = toParams(filter);
  const rename = { from: 'createdSince', to: 'createdBefore' } as const;
  for (const [ours, theirs] of Object.entries(rename)) {
    const value = params.get(ours);
    params.delete(ours);
    if (value) params.set(theirs, value);
  }
  params.set('limit', String(limit));
  if (cursor !== undefined) params.set('cursor', String(cursor));
  return params.toString();
}
