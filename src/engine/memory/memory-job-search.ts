/**
 * The job explorer's search in process (decision 0266), scanned as the SQL scans it
 * (job-search-queries.ts, searchPage): at most SEARCH_SCAN_ROWS jobs past the cursor, the filter of
 * searchFilter. The total is always a count here.
 */
import type { Job } from '../../core/types.js';
import { SEARCH_SCAN_ROWS, type JobSearchPage, type JobSearchParams } from '../job-admin.js';
import { jsonbText } from './jsonb-text.js';
import type { JobRecord } from './memory-job-record.js';

/** The fields a search and a bulk operation both filter on (each absent: any). */
interface FieldFilter {
  readonly type?: string | undefined;
  readonly key?: string | undefined;
  readonly partitionKey?: string | undefined;
  readonly createdSince?: Date | undefined;
  readonly createdBefore?: Date | undefined;
}

export function matchesFields(r: JobRecord, f: FieldFilter): boolean {
  const created = r.createdAt.getTime();
  return (
    (f.type === undefined || r.type === f.type) &&
    (f.key === undefined || r.key === f.key) &&
    (f.partitionKey === undefined || r.partitionKey === f.partitionKey) &&
    (f.createdSince === undefined || created >= f.createdSince.getTime()) &&
    (f.createdBefore === undefined || created < f.createdBefore.getTime())
  );
}

/** Whether a job matches the search's filter (as job-search-queries.ts, searchFilter). */
function searchMatcher(p: JobSearchParams): (r: JobRecord) => boolean {
  const text = p.text?.toLowerCase();
  return (r) =>
    (p.queue === undefined || r.queue === p.queue) &&
    (p.statuses === undefined || p.statuses.includes(r.status)) &&
    matchesFields(r, p) &&
    (text === undefined || jsonbText(r.payload).toLowerCase().includes(text));
}

/** One page of the search over `records` (in id order), each answered through `view`. */
export function searchJobs(
  records: JobRecord[],
  p: JobSearchParams,
  view: (r: JobRecord) => Job,
): JobSearchPage {
  if (p.order === 'newest') records.reverse();
  const hit = searchMatcher(p);
  const page: JobRecord[] = [];
  let scanned = 0;
  let edge: number | null = null;
  const scanLimit = p.scanLimit ?? SEARCH_SCAN_ROWS;
  for (const r of records) {
    if (page.length >= p.limit || scanned >= scanLimit) break;
    if (p.cursor !== undefined && (p.order === 'newest' ? r.id >= p.cursor : r.id <= p.cursor))
      continue;
    scanned++;
    edge = r.id;
    if (hit(r)) page.push(r);
  }
  const next =
    page.length >= p.limit ? page[page.length - 1]!.id : scanned >= scanLimit ? edge : null;
  const total = records.filter(hit).length;
  return { jobs: page.map(view), next, total, totalExact: true };
}
