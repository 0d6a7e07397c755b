/**
 * The job explorer's search (decision 0266): one page of a bounded keyset scan, newest or oldest
 * first, and the planner's estimate of the filter's matches.
 */
import { jobColumns } from './job-sql.js';

export interface JobSearchQueries {
  JobSearchNewest: string;
  JobSearchOldest: string;
  JobSearchEstimate: string;
}

/**
 * The filter of the job explorer's search (decision 0266): $1 queue, $2 statuses text[], $3 type,
 * $4 key, $5 partition key, $6 created since, $7 created before, $8 the payload's ILIKE
 * pattern (each nullable).
 */
const searchFilter = (a: string): string => `($1::text IS NULL OR ${a}.queue = $1::text)
  AND ($2::text[] IS NULL OR ${a}.status = ANY($2::text[]))
  AND ($3::text IS NULL OR ${a}.type = $3::text)
  AND ($4::text IS NULL OR ${a}.key = $4::text)
  AND ($5::text IS NULL OR ${a}.partition_key = $5::text)
  AND ($6::timestamptz IS NULL OR ${a}.created_at >= $6::timestamptz)
  AND ($7::timestamptz IS NULL OR ${a}.created_at < $7::timestamptz)
  AND ($8::text IS NULL OR ${a}.payload::text ILIKE $8::text)`;

/**
 * One page of the search, newest or oldest first. `scanned`: at most $11 jobs past
 * the cursor $9, walked down (or up) the primary key whatever the statistics say (no other
 * index orders by id, and a plan on stale statistics could read every job of a status), each
 * marked with whether it matches; the payload is cast to text only for a job the cheap fields
 * let through. `page`: the first $10 matches. The jobs are read in a second, indexed look-up,
 * so the scan never carries payloads. Every row answers the scan's size and edge (its last id)
 * for the caller's `next`; a page with no match answers one row of them with a null id.
 */
const searchPage = (s: string, order: 'newest' | 'oldest'): string => {
  const [past, direction, edge] = order === 'newest' ? ['<', 'DESC', 'min'] : ['>', 'ASC', 'max'];
  return `WITH scanned AS MATERIALIZED (
      SELECT j.id, (${searchFilter('j')}) AS hit FROM ${s}.jobs j
      WHERE ($9::bigint IS NULL OR j.id ${past} $9::bigint)
      ORDER BY j.id ${direction}
      LIMIT $11::integer
    ),
    page AS (SELECT id FROM scanned WHERE hit ORDER BY id ${direction} LIMIT $10::integer),
    scan AS (SELECT count(*)::integer AS scanned, ${edge}(id) AS edge FROM scanned)
    SELECT ${jobColumns('j')}, scan.scanned, scan.edge
    FROM scan LEFT JOIN ${s}.jobs j ON j.id = ANY(ARRAY(SELECT id FROM page))
    ORDER BY j.id ${direction}`;
};

export function jobSearchQueries(s: string): JobSearchQueries {
  return {
    // $1-$8 the filter (see `searchFilter`), $9 cursor, $10 limit, $11 scan limit.
    JobSearchNewest: searchPage(s, 'newest'),
    JobSearchOldest: searchPage(s, 'oldest'),

    // $1-$8 the filter. The planner's estimate of the rows it matches: planning only, no row
    // read, so it costs the same on a million jobs as on ten (decision 0266).
    JobSearchEstimate: `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${s}.jobs j WHERE ${searchFilter('j')}`,
  };
}
