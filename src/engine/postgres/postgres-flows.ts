/**
 * The flow family on PostgreSQL (decision 0255): a flow is written by one statement
 * (flow-queries.ts), in the caller's transaction when given; the statements that end jobs
 * settle parents as their children finish (flow-settle-sql.ts, migration 16).
 */
import { ConflictError } from '../../core/errors.js';
import type { JobChild, ParentPolicy } from '../../core/flows.js';
import type { JobStatus } from '../../core/types.js';
import {
  flattenFlow,
  nestOutcome,
  type FlatNode,
  type FlowOperations,
  type FlowOutcome,
  type JobChildren,
  type JobChildrenParams,
  type JobEnqueueFlowParams,
} from '../flows.js';
import type { PgContext } from './context.js';
import { flowQueries, type FlowQueries } from './flow-queries.js';
import { specJson } from './postgres-enqueue.js';
import { mapJob, type JobRow } from './job-rows.js';
import { toSafeInteger } from './rows.js';

/** How often a keyed flow asks again for a root key whose live job committed meanwhile. */
const FLOW_RUNS = 3;

interface ChildRow {
  id: string;
  queue: string;
  type: string | null;
  status: JobStatus;
  result: unknown;
  last_error: string | null;
  parent_policy: ParentPolicy | null;
  total: string;
}

export class PostgresFlows implements FlowOperations {
  private readonly sql: FlowQueries;

  constructor(private readonly ctx: PgContext) {
    this.sql = flowQueries(ctx.quotedSchema);
  }

  async jobEnqueueFlow(p: JobEnqueueFlowParams): Promise<FlowOutcome> {
    const flat = flattenFlow(p.root);
    const input = JSON.stringify(flat.map(nodeJson));
    for (let run = 1; ; run++) {
      const rows = await this.ctx.query<JobRow & { created: boolean }>(
        'JobEnqueueFlow',
        this.sql.JobEnqueueFlow,
        [input, this.ctx.pinnedNow(), this.ctx.notifyChannel],
        p.tx,
      );
      if (rows.length === flat.length && rows.every((r) => r.created))
        return nestOutcome(flat, rows.map(mapJob));
      const existing = rows.find((r) => !r.created);
      if (existing) return { job: mapJob(existing), created: false, children: [] };
      if (rows.length !== 0)
        throw new Error(`JobEnqueueFlow answered ${rows.length} rows for ${flat.length} jobs`);
      // The root's key met a job committed after the statement's snapshot: look again.
      if (run >= FLOW_RUNS) {
        const { queue, key } = flat[0]!.spec;
        throw new ConflictError(
          `the live job of queue "${queue}" with key "${key}" kept changing during enqueueFlow; retry`,
          { queue, key },
        );
      }
    }
  }

  async jobChildren(p: JobChildrenParams): Promise<JobChildren> {
    const rows = await this.ctx.query<ChildRow>('JobChildren', this.sql.JobChildren, [
      p.id,
      p.limit ?? null,
    ]);
    const total = rows[0] ? toSafeInteger(rows[0].total, 'count') : 0;
    // A limit of 0 answers no row, so no total either: counted apart, rarely.
    if (rows.length === 0 && p.limit === 0) {
      const all = await this.jobChildren({ id: p.id });
      return { children: [], total: all.total };
    }
    return { children: rows.map(mapChild), total };
  }
}

function mapChild(row: ChildRow): JobChild {
  return {
    id: toSafeInteger(row.id, 'jobs.id'),
    queue: row.queue,
    type: row.type,
    status: row.status,
    result: row.result ?? null,
    lastError: row.last_error,
    parentPolicy: row.parent_policy ?? 'fail-parent',
  };
}

/** One element of the JobEnqueueFlow input (the jsonb_to_recordset columns). */
function nodeJson(node: FlatNode, o: number): Record<string, unknown> {
  return {
    ...specJson(o, node.spec),
    parent_o: node.parent,
    policy: node.parentPolicy,
    children: node.childCount,
  };
}
