/**
 * The SQL pieces every statement that grants a new term shares (decision 0225): the current
 * server epoch, the first token of a term in it, and the quarantine gate. See migration 7 for
 * the functions they call.
 *
 * A statement using them has a `clock` CTE (its `now`) and puts `epoch` in its FROM list.
 */

/** The `epoch` CTE: `epoch`, `token_floor` (epoch * 2^32) and `quarantine_until`. */
export const EPOCH_CTE = (s: string): string =>
  `epoch AS (SELECT e.epoch, e.token_floor, e.quarantine_until FROM ${s}.token_epoch() e)`;

/** The token of a new term after `previous`: above every token of every earlier epoch. */
export const NEXT_TERM = (previous: string): string =>
  `greatest(${previous} + 1, (SELECT token_floor FROM epoch) + 1)`;

/** The token of a resource's first term (its row is new). */
export const FIRST_TERM = '(SELECT token_floor FROM epoch) + 1';

/**
 * A condition that is true, or raises SQLSTATE LHQ01 (with the milliseconds left as its detail)
 * when the quarantine of a new epoch still runs and `grantsNewTerm` holds. CASE evaluates its
 * branches lazily, so outside a quarantine `grantsNewTerm` (a subquery, say) is never run.
 */
export const QUARANTINE_GATE = (s: string, grantsNewTerm: string): string =>
  `(CASE WHEN clock.now < epoch.quarantine_until AND (${grantsNewTerm})
     THEN ${s}.refuse_new_term(epoch.quarantine_until, clock.now) ELSE true END)`;

/** Records the epoch of the server's current history; its commit is durable (DURABLE_COMMIT). */
export const BEGIN_EPOCH = (s: string, durableCommit: string): string =>
  `WITH durable AS (SELECT ${durableCommit} AS commit_mode) SELECT ${s}.begin_epoch() AS epoch FROM durable`;
