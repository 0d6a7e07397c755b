/**
 * A token is never visible before it is durable. A statement that hands out a fencing token or
 * a generation (a lease or lease-lock term, a job claim, a session-lock term, a schedule slot,
 * a fence's newest token) commits with its WAL flushed, and waited for by a synchronous standby
 * where one is configured, before its answer leaves the server: otherwise a crash or failover
 * right after the answer would roll the increment back and the next holder would be handed the
 * same token.
 *
 * `synchronous_commit` on (PostgreSQL's default) gives that. Some of leasehold's own statements
 * turn it off for their transaction (the worker heartbeat), and an operator may turn it off for
 * a role or database; so token statements set it back for their own transaction: `off`,
 * `local` and `remote_write` become `on`, and `remote_apply` (already stronger) is kept. The
 * setting is transaction-local (`set_config(…, true)`): inside a caller's own transaction it
 * makes that transaction's commit durable too, which is what a token it wrote needs.
 */

/** A SQL expression that makes the current transaction's commit durable; evaluates to the mode. */
export const DURABLE_COMMIT = `set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') IN ('off', 'local', 'remote_write') THEN 'on' ELSE current_setting('synchronous_commit') END, true)`;

/**
 * The `clock` CTE of the time-sensitive statements (`coalesce($now, now())`), for a statement
 * that hands out a token: it also makes the transaction's commit durable. The function is
 * volatile, so PostgreSQL evaluates the CTE once and never inlines it away.
 */
export const DURABLE_CLOCK = (param: string): string =>
  `WITH clock AS (SELECT coalesce(${param}::timestamptz, now()) AS now, ${DURABLE_COMMIT} AS commit_mode)`;
