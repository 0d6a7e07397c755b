/**
 * The settlement of flows inside the statements that end jobs (decision 0255): a CTE calling
 * `job_flow_ended` (migration 16) for the rows of a flow among those the statement ended. Rows
 * outside a flow are filtered out before any call, so a statement that ends none costs one
 * test of two NULL columns per row. The ORDER BY is a barrier: the sort reads every row of
 * `source` first, so the statement has written all its rows before the first call changes
 * other ones (a parent and its child cancelled by one statement, say); and in parent order, so
 * two statements settling the same parents lock them in the same order (no deadlock between two
 * workers' completion batches). Every statement using it joins `flow_settled`, so that it
 * runs. `source` must return id, parent_id, children_left, parent_policy and last_error.
 * `stamp` is the instant the parents' changes carry: the statement's `clock` CTE by default.
 */
export const flowSettled = (
  s: string,
  source: string,
  outcome: string,
  stamp = '(SELECT now FROM clock)',
): string =>
  `flow_settled AS (
    SELECT count(${s}.job_flow_ended(f.id, f.parent_id, f.children_left, f.parent_policy,
      f.outcome, f.last_error, ${stamp})) AS n
    FROM (
      SELECT x.id, x.parent_id, x.children_left, x.parent_policy, x.last_error, ${outcome} AS outcome
      FROM ${source} x WHERE x.parent_id IS NOT NULL OR x.children_left IS NOT NULL
      ORDER BY x.parent_id, x.id
    ) f WHERE f.outcome IS NOT NULL)`;

/** The columns `flowSettled` reads, for a RETURNING list of `alias`. */
export const flowReturning = (alias: string): string =>
  `${alias}.parent_id, ${alias}.children_left, ${alias}.parent_policy, ${alias}.last_error`;

/** The outcome of a statement's rows for their flow when only dead-lettered ones count. */
export const DEAD_OUTCOME = "CASE WHEN x.status = 'dead' THEN 'dead' END";
