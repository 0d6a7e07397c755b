/**
 * The statements of the flow family (postgres-flows.ts runs them; decision 0255). Same
 * conventions as job-sql.ts, whose fragments they share. What a child's end does to its
 * parent is not here: each statement that ends jobs does it (flow-settle-sql.ts).
 */
import { CLOCK, LIVE, MS, jobColumns, notified } from './job-sql.js';

/** The flow input, `$1`: a jsonb array of nodes in pre-order (postgres-flows.ts) as rows `i`. */
const FLOW_INPUT = `jsonb_to_recordset($1::jsonb) AS i(o integer, parent_o integer, queue text,
  type text, key text, payload jsonb, headers jsonb, partition_key text, priority integer,
  run_at timestamptz, delay_ms float8, max_attempts integer, timeout_ms integer, policy text,
  children integer)`;

const FLOW_COLUMNS = `queue, type, key, payload, headers, partition_key, priority, max_attempts,
  timeout_ms, available_at, created_at, updated_at, status, parent_id, parent_policy, children_left`;

/** FLOW_COLUMNS' values for an input row `i` whose parent's row (if any) is `p`. */
const flowValues = (parentId: string, policy: string): string => `i.queue, i.type, i.key, i.payload,
  coalesce(i.headers, '{}'::jsonb), i.partition_key, coalesce(i.priority, 0), i.max_attempts,
  i.timeout_ms, coalesce(i.run_at, clock.now + greatest(coalesce(i.delay_ms, 0), 0) ${MS}),
  clock.now, clock.now, CASE WHEN i.children > 0 THEN 'waiting' ELSE 'pending' END,
  ${parentId}, ${policy}, CASE WHEN i.children > 0 THEN i.children END`;

export interface FlowQueries {
  JobEnqueueFlow: string;
  JobChildren: string;
}

export function flowQueries(s: string): FlowQueries {
  const cols = jobColumns('j');
  return {
    // $1 the nodes (jsonb array of {o, parent_o, queue, …, policy, children}, pre-order, the
    // root first with o = 0), $2 now, $3 channel.
    //
    // Ids are drawn in input order, so a parent's id is below its children's and siblings are
    // in their order. The root goes first, alone: with a key a live job holds, it inserts
    // nothing, and `rest`, which inserts only once the root is in, inserts nothing either.
    // `existing` then answers that job from the statement's snapshot; a job committed after it
    // by a concurrent enqueue is invisible, and the caller asks again (postgres-flows.ts).
    JobEnqueueFlow: `${CLOCK('$2')},
      input AS MATERIALIZED (
        SELECT nextval('${s}.jobs_id_seq') AS id, i.* FROM ${FLOW_INPUT} ORDER BY i.o
      ),
      root AS (
        INSERT INTO ${s}.jobs AS j (id, ${FLOW_COLUMNS}) OVERRIDING SYSTEM VALUE
        SELECT i.id, ${flowValues('NULL::bigint', 'NULL')} FROM input i, clock WHERE i.o = 0
        ON CONFLICT (queue, key) WHERE key IS NOT NULL AND status IN ${LIVE} DO NOTHING
        RETURNING ${cols}
      ),
      rest AS (
        INSERT INTO ${s}.jobs AS j (id, ${FLOW_COLUMNS}) OVERRIDING SYSTEM VALUE
        SELECT i.id, ${flowValues('p.id', 'i.policy')}
        FROM input i JOIN input p ON p.o = i.parent_o, clock
        WHERE i.o > 0 AND EXISTS (SELECT 1 FROM root)
        ORDER BY i.id
        RETURNING ${cols}
      ),
      existing AS (
        SELECT ${cols} FROM input i
        JOIN ${s}.jobs j ON j.queue = i.queue AND j.key = i.key AND j.status IN ${LIVE}
        WHERE i.o = 0 AND NOT EXISTS (SELECT 1 FROM root)
      ),
      written AS (SELECT * FROM root UNION ALL SELECT * FROM rest),
      ${notified('$3', 'written', "status = 'pending'")}
      SELECT r.* FROM (
        SELECT true AS created, w.* FROM written w
        UNION ALL
        SELECT false AS created, e.* FROM existing e
      ) r, notified
      ORDER BY r.id`,

    // $1 parent id, $2 limit (null: all). Direct children in id (enqueue) order, and how many.
    JobChildren: `SELECT j.id, j.queue, j.type, j.status, j.result, j.last_error, j.parent_policy,
        count(*) OVER () AS total
      FROM ${s}.jobs j WHERE j.parent_id = $1
      ORDER BY j.id LIMIT $2`,
  };
}
