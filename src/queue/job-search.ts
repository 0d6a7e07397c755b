/**
 * The job explorer's search (issue 30 part 2, decision 0266): `lh.jobs.search(options)`. Its
 * filter has the fields of the operations over many jobs (bulk-operations.ts), so a filter
 * found here can be handed to `lh.queue(name).retryAll` as it is, plus any queue and `text`
 * (in the payload). Pages are keyset pages (`cursor`: the previous page's `next`), never an
 * OFFSET, and every page reads a bounded number of jobs (SEARCH_SCAN_ROWS); the total is a
 * count or an estimate, never a full count of a large table.
 */
import { typeName } from '../core/duration.js';
import { InvalidArgumentError } from '../core/errors.js';
import { JOB_STATUSES, type JobStatus } from '../core/types.js';
import { LIMITS, requireKnownFields, requireName, requireSafeInteger } from '../core/validate.js';
import type { JobSearchParams } from '../engine/job-admin.js';
import { matchFields, type JobFilter } from './bulk-operations.js';

export interface JobSearchOptions extends JobFilter {
  /** Only this queue; default: every queue. */
  queue?: string;
  /** Jobs whose payload, as JSON text, contains this (case-insensitive; 1 to 200 characters). */
  text?: string;
  /** `newest` (the default): id descending; `oldest`: id ascending. */
  order?: 'newest' | 'oldest';
  /** The previous page's `next`. */
  cursor?: number;
  /** At most this many jobs (default 50, at most 1,000). */
  limit?: number;
}

export const SEARCH_FIELDS = [
  'queue',
  'status',
  'type',
  'key',
  'partitionKey',
  'createdSince',
  'createdBefore',
  'text',
  'order',
  'cursor',
  'limit',
] as const;

export const SEARCH_TEXT_MAX = 200;
export const SEARCH_ORDERS = ['newest', 'oldest'] as const;

/** The engine's search for `options`, or invalid_argument naming the first bad field. */
export function toJobSearch(options: unknown): JobSearchParams {
  const o = requireKnownFields('options', options, SEARCH_FIELDS, 'search');
  const search: JobSearchParams = { order: order(o.order), limit: limit(o.limit) };
  if (o.queue !== undefined) search.queue = requireName('queue', o.queue);
  if (o.status !== undefined) search.statuses = statuses(o.status);
  Object.assign(search, matchFields(o));
  if (o.text !== undefined) search.text = requireName('text', o.text, SEARCH_TEXT_MAX);
  if (o.cursor !== undefined) search.cursor = requireSafeInteger('cursor', o.cursor, 1);
  return search;
}

function order(value: unknown): 'newest' | 'oldest' {
  if (value === undefined) return 'newest';
  if (value === 'newest' || value === 'oldest') return value;
  throw new InvalidArgumentError(
    'order',
    `must be newest or oldest, got ${typeof value === 'string' ? JSON.stringify(value) : typeName(value)}`,
  );
}

function limit(value: unknown): number {
  const n = requireSafeInteger('limit', value ?? 50, 1);
  if (n > LIMITS.listMaxLimit)
    throw new InvalidArgumentError('limit', `must be at most ${LIMITS.listMaxLimit}, got ${n}`);
  return n;
}

function statuses(value: unknown): JobStatus[] {
  const list: unknown[] = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw new InvalidArgumentError('status', 'must name at least one status');
  return [
    ...new Set(
      list.map((s) => {
        if (typeof s !== 'string' || !(JOB_STATUSES as readonly string[]).includes(s))
          throw new InvalidArgumentError(
            'status',
            `must be one of ${JOB_STATUSES.join(', ')}, got ${typeof s === 'string' ? JSON.stringify(s) : typeName(s)}`,
          );
        return s as JobStatus;
      }),
    ),
  ];
}
