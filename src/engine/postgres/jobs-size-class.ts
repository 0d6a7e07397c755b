/**
 * The size class of the `jobs` heap, by which the job family names the statements that look
 * jobs up by id (decision 0282).
 *
 * Why: PostgreSQL keeps a named statement's generic plan, made at its sixth run, until
 * something invalidates it (an ANALYZE or VACUUM of a table it reads, DDL), not when the table
 * grows. A plan made while `jobs` held a few hundred rows finds a batch's ids with a sequential
 * scan, the cheapest path at that size, and keeps scanning the whole table after it has grown
 * to hundreds of thousands: measured 16 ms a claim of 100 jobs at 30,000 rows, against 1.3 ms
 * for the plan made at that size. Naming the statement after the heap's size class gives it a
 * new plan, made for the table as it is, each time the heap has doubled (or halved) since.
 *
 * Every statement so named answers the heap's size (HEAP_BYTES, `pg_relation_size`: a stat of
 * its files, once a statement) and the class moves with it, so an engine that only completes
 * jobs others claimed follows the table as well as one that claims them. Classes stop at
 * TOP_CLASS, a size past which no plan of a batch lookup is a sequential scan, so a connection
 * holds at most TOP_CLASS + 1 versions of each statement.
 */
const PAGE_BYTES = 8192;
/** 2^12 pages: 32 MB of heap, about a hundred thousand jobs. */
const TOP_CLASS = 12;

/**
 * The heap's size in bytes as a column named heap_bytes: a scalar subquery, so that PostgreSQL
 * reads it once a statement, however many rows the statement answers.
 */
export const HEAP_BYTES = (s: string): string =>
  `(SELECT pg_relation_size('${s}.jobs'::regclass)::float8) AS heap_bytes`;

export class JobsSizeClass {
  private current = 0;

  /**
   * Records the heap size a statement answered, in bytes. Anything else (an answer with no row,
   * a caller's client that gives float8 as text) leaves the class as it is.
   */
  observe(heapBytes: unknown): void {
    if (typeof heapBytes !== 'number' || !Number.isFinite(heapBytes)) return;
    const pages = Math.max(1, heapBytes / PAGE_BYTES);
    this.current = Math.min(TOP_CLASS, Math.floor(Math.log2(pages)));
  }

  /** The statement's name for the heap's current size class, e.g. `JobComplete.7`. */
  name(statement: string): string {
    return `${statement}.${this.current}`;
  }
}
